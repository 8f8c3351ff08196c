// DeepSeek sparse attention (V3.2 DSA): a lightning indexer picks dsa_top_k tokens over the whole sequence.
// AllGather-CP gathers KV latent and hidden states, and every rank writes the full KV back (N x memory);
// select-then-gather moves only the selected entries.
#include <fmt/format.h>

#include "sim/scenario/yaml_reader.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  ModeVolume v;
  v.primitive = "AllGather of KV latent + AllGather of hidden states";
  v.bytes = (n - 1) * local * (ckv + p.d_model * p.s);
  v.formula = fmt::format("(N-1)/N * B*S * (c_kv + d_model*s)  [{}, c_kv={}, d_model={}]", common_params_text(p), ckv,
                          p.d_model);
  v.seed_bytes = v.bytes;
  v.seed_formula = "(N-1)/N * S * (2*d_c + d_model) * s";
  v.note = fmt::format("KV {:.0f} B + hidden states {:.0f} B; every rank keeps the full KV (N x memory); the "
                       "seed's share (75%) counts the KV part only",
                       (n - 1) * local * ckv, (n - 1) * local * p.d_model * p.s);
  return v;
}
std::optional<ModeVolume> select_gather_step_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_decode_volume(p, p.dsa_top_k, 1);
}
std::optional<ModeVolume> select_gather_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_volume(p, p.dsa_top_k, p.dsa_exact);
}
std::optional<ModeVolume> select_gather_backward_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_backward_volume(p, p.dsa_top_k, p.dsa_exact);
}

// The full write-back kept the KV: the backward reduce-scatters the hidden states' and KV latents' gradients.
std::optional<ModeVolume> allgather_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*allgather_volume(p, m), 1, "reduce-scatter of the KV latent and hidden-state gradients");
}

// AllGather-CP's full write-back keeps every rank's tokens on every rank.
double dsa_kv_cache_bytes(const KvCacheInputs& kv) {
  const double tokens = kv.algorithm == CpAlgorithm::ALLGATHER ? kv.local_tokens * kv.in.parallel.cp : kv.local_tokens;
  return tokens * kv.per_token_bytes;
}

void read_dsa_plan(MapReader& block, CpPlan& plan) {
  read_selection_plan(block, plan, AttentionKind::DSA);
  if (!block.has("partition")) return;
  plan.dsa_partition = block.choice_or("partition", kDsaSplitNames, DsaSplit::ROUND_ROBIN);
  if (plan.algorithm(AttentionKind::DSA) != CpAlgorithm::ALLGATHER)
    block.fail("partition", "applies to AllGather-CP (SGLang's in-seq-split and round-robin-split); select-gather "
                            "splits tokens round-robin");
}

// SGLang's constraints: in-seq-split runs one sequence (batch 1) over 2N blocks; round-robin-split needs S mod N = 0.
void check_dsa(const KindCheck& c) {
  const std::uint64_t S = c.run.seq_len, N = c.parallel.cp;
  if (c.plan.algorithm(AttentionKind::DSA) != CpAlgorithm::ALLGATHER) return;
  if (c.plan.dsa_partition == DsaSplit::ZIGZAG) {
    if (c.run.batch != 1)
      c.fail_plan("partition", fmt::format("zigzag (in-seq-split) runs batch 1, got run.batch {}", c.run.batch));
    if (S % (2 * N) != 0)
      c.fail_plan("partition", fmt::format("zigzag needs S ({}) divisible by 2 x cp ({})", S, 2 * N));
  } else if (S % N != 0) {
    c.fail_plan("partition", fmt::format("round-robin needs S ({}) divisible by cp ({})", S, N));
  }
}

std::vector<std::pair<std::string, std::string>> dsa_summary_fields(const CpPlan& plan) {
  auto fields = selection_summary_fields(plan, AttentionKind::DSA);
  if (plan.algorithm(AttentionKind::DSA) == CpAlgorithm::ALLGATHER)
    fields.push_back({"partition", kDsaSplitNames.name(plan.dsa_partition)});
  return fields;
}

}  // namespace

AttentionKindDef dsa_attention_kind() {
  AttentionKindDef k;
  k.name = "dsa";
  k.description = "DeepSeek sparse attention (indexer top-k over all tokens)";
  k.default_algorithm = CpAlgorithm::ALLGATHER;
  k.modes = {{.algorithm = CpAlgorithm::ALLGATHER, .forward = lower_dsa_allgather, .backward = lower_dsa_allgather_backward,
              .volume = allgather_volume, .backward_volume = allgather_backward_volume,
              .decode = decode_dsa_full, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::SELECT_GATHER, .forward = lower_dsa_select_gather,
              .backward = lower_dsa_select_gather_backward, .volume = select_gather_volume,
              .backward_volume = select_gather_backward_volume,
              .decode = decode_dsa_select_gather, .decode_volume = select_gather_step_volume}};
  k.kv_cache_bytes = dsa_kv_cache_bytes;
  k.read_plan = read_dsa_plan;
  k.check = check_dsa;
  k.summary_fields = dsa_summary_fields;
  // AllGather-CP: cp.dsa.partition (round-robin-split or in-seq-split); select-gather splits round-robin.
  k.token_layout = [](const CpPlan& plan) {
    return plan.algorithm(AttentionKind::DSA) == CpAlgorithm::ALLGATHER && plan.dsa_partition == DsaSplit::ZIGZAG
               ? Partition::ZIGZAG
               : Partition::STRIPED;
  };
  return k;
}

}  // namespace cpsim
