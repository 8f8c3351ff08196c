// Sliding-window attention: each rank needs only the window left of its block (boundary P2P from the left
// neighbour), or, under a round-robin partition, an AllGather (heterogeneous-attention-cp.md, SWA).
#include <fmt/format.h>

#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> boundary_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv();
  ModeVolume v;
  v.primitive = "P2P from the left neighbour";
  v.bytes = p.B * std::min(p.n_win, p.S / n) * ckv;
  v.formula = fmt::format("B * min(n_win, S/N) * c_kv  [{}, n_win={}, c_kv={}]", common_params_text(p), p.n_win, ckv);
  v.seed_bytes = v.bytes;
  v.seed_formula = "min(n_win, S/N) * 2*d_kv*s";
  v.note = "rank 0 receives nothing; contiguous partition";
  return v;
}

std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v = kv_allgather_volume(p);
  v.note = "round-robin partition: every rank's windows cover the whole sequence, so SWA needs all remote KV";
  return v;
}

void check_swa(const KindCheck& c) {
  if (c.model.sliding_window <= 0) c.fail_pattern("swa layers need the model's sliding_window (tokens)");
  const std::uint64_t local_tokens = c.run.seq_len / c.parallel.cp;
  if (c.plan.algorithm(AttentionKind::SWA) == CpAlgorithm::BOUNDARY &&
      std::uint64_t(c.model.sliding_window) > local_tokens)
    c.fail_pattern(fmt::format("swa/boundary needs sliding_window ({}) <= S/cp ({}): a wider window reaches past "
                               "the left neighbour (use cp.swa.algorithm: allgather)",
                               c.model.sliding_window, local_tokens));
}

}  // namespace

AttentionKindDef swa_attention_kind() {
  AttentionKindDef k;
  k.name = "swa";
  k.description = "sliding-window attention (model.sliding_window)";
  k.default_algorithm = CpAlgorithm::BOUNDARY;
  k.modes = {{CpAlgorithm::BOUNDARY, lower_swa_boundary, nullptr, false, true, boundary_volume},
             {CpAlgorithm::ALLGATHER, lower_swa_allgather, nullptr, false, true, allgather_volume}};
  k.check = check_swa;
  return k;
}

}  // namespace cpsim
