// Linear attention: a [B, H, d, d] state per rank instead of a KV cache. LASP-1 passes it along a serial chain,
// LASP-2 all-gathers every rank's state (independent of S).
#include <fmt/format.h>

#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

double state_bytes(const CommParams& p) { return p.B * p.linear_heads * p.linear_head_dim * p.linear_head_dim * p.s; }

std::optional<ModeVolume> lasp2_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, state = state_bytes(p);
  ModeVolume v;
  v.primitive = "AllGather of [B,H,d,d] states";
  v.bytes = (n - 1) * state;
  v.formula = fmt::format("(N-1) * B*H*d^2*s  [{}, H={}, d={}]", common_params_text(p), p.linear_heads,
                          p.linear_head_dim);
  v.seed_bytes = (n - 1) / n * state;
  v.seed_formula = "(N-1)/N * B*H*d^2*s";
  v.note = "independent of S. The seed's (N-1)/N*B*H*d^2*s treats the gathered states as one [B,H,d,d] tensor "
           "split N ways; an AllGather of every rank's full state moves N times that";
  return v;
}

std::optional<ModeVolume> lasp1_volume(const CommParams& p, const MobaCpPlan&) {
  const double state = state_bytes(p);
  ModeVolume v;
  v.primitive = "P2P state chain, N-1 serial steps";
  v.bytes = p.N > 1 ? state : 0;
  v.formula = fmt::format("B*H*d^2*s (from the left neighbour)  [{}, H={}, d={}]", common_params_text(p),
                          p.linear_heads, p.linear_head_dim);
  v.note = "rank 0 receives nothing; the chain is serial";
  return v;
}

std::optional<ModeVolume> lasp2_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*lasp2_volume(p, m), 1, "AllGather of the state gradients dM");
}
std::optional<ModeVolume> lasp1_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*lasp1_volume(p, m), 1, "P2P chain of the state gradients, N-1 serial steps");
}

// The state, in the KV cache's dtype, whatever the sequence length.
double linear_kv_cache_bytes(const KvCacheInputs& kv) {
  return kv.in.run.batch * kv.shape.q_heads * double(kv.shape.head_dim) * kv.shape.head_dim * kv.shape.kv_bytes;
}

// LASP-2H (the seed's hybrid): the softmax layers AllGather their KV instead of a ring, one primitive with the
// linear layers' state AllGather, over the same contiguous split (no re-layout between the two). Unless the
// scenario names cp.dense.algorithm and cp.dense.partition, lasp2h sets them.
void read_linear_plan(MapReader&, CpPlan& plan) {
  if (plan.algorithm(AttentionKind::LINEAR) != CpAlgorithm::LASP2H) return;
  if (!plan.dense.algorithm_given) plan.dense.algorithm = CpAlgorithm::ALLGATHER;
  if (!plan.dense.partition_given) plan.dense.partition = Partition::CONTIGUOUS;
}

void check_linear(const KindCheck& c) {
  if (c.plan.algorithm(AttentionKind::LINEAR) != CpAlgorithm::LASP2H || c.run.phase == Phase::DECODE) return;
  if (c.model.uses(AttentionKind::DENSE) && c.plan.dense.algorithm != CpAlgorithm::ALLGATHER)
    c.fail_plan("algorithm", fmt::format("lasp2h runs the softmax layers with AllGather-KV; cp.dense.algorithm is {}",
                                         algorithm_name(c.plan.dense.algorithm)));
}

}  // namespace

AttentionKindDef linear_attention_kind() {
  AttentionKindDef k;
  k.name = "linear";
  k.description = "linear attention (chunked, linear_chunk)";
  k.default_algorithm = CpAlgorithm::LASP2;
  k.modes = {{.algorithm = CpAlgorithm::LASP1, .forward = lower_linear_lasp1, .backward = lower_linear_lasp1_backward,
              .volume = lasp1_volume, .backward_volume = lasp1_backward_volume,
              .decode = decode_linear, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::LASP2, .forward = lower_linear_lasp2, .backward = lower_linear_lasp2_backward,
              .volume = lasp2_volume, .backward_volume = lasp2_backward_volume,
              .decode = decode_linear, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::LASP2H, .forward = lower_linear_lasp2, .backward = lower_linear_lasp2_backward,
              .volume = lasp2_volume, .backward_volume = lasp2_backward_volume,
              .decode = decode_linear, .decode_volume = no_decode_traffic}};
  k.read_plan = read_linear_plan;
  k.check = check_linear;
  k.kv_cache_bytes = linear_kv_cache_bytes;
  return k;
}

}  // namespace cpsim
