// Mamba-2 SSM layers (the seed's "与 Mamba/SSM 的关系"): a fixed-size [B, H, N, d] prefix state per rank instead of a
// KV cache; CP passes it as LASP does for linear attention: along a serial chain (lasp1) or by one AllGather
// (lasp2, the default: the seed's "LASP-2 的 chunk + AllGather 范式可直接迁移到 SSM").
#include <fmt/format.h>

#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

double state_bytes(const CommParams& p) { return p.B * p.linear_heads * p.ssm_state_dim * p.linear_head_dim * p.s; }

std::optional<ModeVolume> lasp2_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v;
  v.primitive = "AllGather of [B,H,N,d] SSM states";
  v.bytes = (p.N - 1) * state_bytes(p);
  v.formula = fmt::format("(N-1) * B*H*N_state*d*s  [{}, H={}, N_state={}, d={}]", common_params_text(p),
                          p.linear_heads, p.ssm_state_dim, p.linear_head_dim);
  v.note = "independent of S";
  return v;
}

std::optional<ModeVolume> lasp1_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v;
  v.primitive = "P2P state chain, N-1 serial steps";
  v.bytes = p.N > 1 ? state_bytes(p) : 0;
  v.formula = fmt::format("B*H*N_state*d*s (from the left neighbour)  [{}, H={}, N_state={}, d={}]",
                          common_params_text(p), p.linear_heads, p.ssm_state_dim, p.linear_head_dim);
  v.note = "rank 0 receives nothing; the chain is serial";
  return v;
}

std::optional<ModeVolume> lasp2_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*lasp2_volume(p, m), 1, "AllGather of the state gradients");
}
std::optional<ModeVolume> lasp1_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*lasp1_volume(p, m), 1, "P2P chain of the state gradients, N-1 serial steps");
}

double ssm_kv_cache_bytes(const KvCacheInputs& kv) {
  return kv.in.run.batch * kv.shape.q_heads * double(kv.in.model.attention.ssm_state_dim) * kv.shape.head_dim *
         kv.shape.kv_bytes;
}

}  // namespace

AttentionKindDef ssm_attention_kind() {
  AttentionKindDef k;
  k.name = "ssm";
  k.description = "Mamba-2 SSM (chunked SSD, ssm_state_dim)";
  k.default_algorithm = CpAlgorithm::LASP2;
  k.modes = {{.algorithm = CpAlgorithm::LASP1, .forward = lower_ssm_lasp1, .backward = lower_ssm_lasp1_backward,
              .volume = lasp1_volume, .backward_volume = lasp1_backward_volume,
              .decode = decode_ssm, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::LASP2, .forward = lower_ssm_lasp2, .backward = lower_ssm_lasp2_backward,
              .volume = lasp2_volume, .backward_volume = lasp2_backward_volume,
              .decode = decode_ssm, .decode_volume = no_decode_traffic}};
  k.kv_cache_bytes = ssm_kv_cache_bytes;
  return k;
}

}  // namespace cpsim
