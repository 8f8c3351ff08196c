// Compressed sparse attention (DeepSeek-V4 CSA): KV compressed csa_ratio times, an indexer picks csa_top_k
// entries. AllGather the compressed KV then select (exact), or select locally then gather (the seed's two routes).
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  return compressed_allgather_volume(p, p.csa_ratio);
}
std::optional<ModeVolume> select_gather_step_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_decode_volume(p, p.csa_top_k, p.csa_ratio);
}
std::optional<ModeVolume> select_gather_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_volume(p, p.csa_top_k, p.csa_exact);
}
std::optional<ModeVolume> select_gather_backward_volume(const CommParams& p, const MobaCpPlan&) {
  return select_gather_backward_volume(p, p.csa_top_k, p.csa_exact);
}

std::optional<ModeVolume> allgather_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*allgather_volume(p, m), 2, "AllGather of compressed KV again + reduce-scatter of its gradients");
}

void check_csa(const KindCheck& c) { require_local_multiple(c, AttentionKind::CSA, c.model.attention.csa_ratio, "csa_ratio"); }

double csa_kv_cache_bytes(const KvCacheInputs& kv) {
  return kv.local_tokens / kv.in.model.attention.csa_ratio * kv.per_token_bytes;
}

void read_csa_plan(MapReader& block, CpPlan& plan) { read_selection_plan(block, plan, AttentionKind::CSA); }
std::vector<std::pair<std::string, std::string>> csa_summary_fields(const CpPlan& plan) {
  return selection_summary_fields(plan, AttentionKind::CSA);
}

}  // namespace

AttentionKindDef csa_attention_kind() {
  AttentionKindDef k;
  k.name = "csa";
  k.description = "compressed sparse attention (csa_ratio, csa_top_k)";
  k.default_algorithm = CpAlgorithm::ALLGATHER;
  k.modes = {{.algorithm = CpAlgorithm::ALLGATHER, .forward = lower_csa_allgather, .backward = lower_csa_allgather_backward,
              .volume = allgather_volume, .backward_volume = allgather_backward_volume,
              .decode = decode_csa_full, .decode_volume = no_decode_traffic},
             {.algorithm = CpAlgorithm::SELECT_GATHER, .forward = lower_csa_select_gather,
              .backward = lower_csa_select_gather_backward, .volume = select_gather_volume,
              .backward_volume = select_gather_backward_volume,
              .decode = decode_csa_select_gather, .decode_volume = select_gather_step_volume}};
  k.check = check_csa;
  k.kv_cache_bytes = csa_kv_cache_bytes;
  k.read_plan = read_csa_plan;
  k.summary_fields = csa_summary_fields;
  return k;
}

}  // namespace cpsim
