// Heavily compressed attention (DeepSeek-V4 HCA): dense attention over KV compressed hca_ratio times. V4 keeps it
// local (no CP communication); AllGather of the compressed KV is the alternative.
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> local_volume(const CommParams&, const MobaCpPlan&) {
  ModeVolume v;
  v.primitive = "none (local dense over local compressed entries)";
  v.formula = "0";
  v.seed_bytes = 0;
  v.seed_formula = "0";
  return v;
}
std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  return compressed_allgather_volume(p, p.hca_ratio);
}

std::optional<ModeVolume> allgather_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*allgather_volume(p, m), 2, "AllGather of compressed KV again + reduce-scatter of its gradients");
}

void check_hca(const KindCheck& c) { require_local_multiple(c, AttentionKind::HCA, c.model.attention.hca_ratio, "hca_ratio"); }

double hca_kv_cache_bytes(const KvCacheInputs& kv) {
  return kv.local_tokens / kv.in.model.attention.hca_ratio * kv.per_token_bytes;
}

}  // namespace

AttentionKindDef hca_attention_kind() {
  AttentionKindDef k;
  k.name = "hca";
  k.description = "heavily compressed dense attention (hca_ratio)";
  k.default_algorithm = CpAlgorithm::LOCAL;
  k.modes = {{.algorithm = CpAlgorithm::LOCAL, .forward = lower_hca_local, .backward = lower_hca_local_backward,
              .volume = local_volume, .backward_volume = local_volume,
              .decode = decode_hca, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::ALLGATHER, .forward = lower_hca_allgather, .backward = lower_hca_allgather_backward,
              .volume = allgather_volume, .backward_volume = allgather_backward_volume,
              .decode = decode_hca, .decode_volume = no_decode_traffic}};
  k.check = check_hca;
  k.kv_cache_bytes = hca_kv_cache_bytes;
  return k;
}

}  // namespace cpsim
