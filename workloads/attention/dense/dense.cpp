// Dense (full causal) attention: ring (pass-KV), AllGather-KV, Ulysses, USP, pass-Q, and the decode tree
// (docs/dense-algorithms.md). Its cp.dense block also holds the partition, the USP degree and the auto rule.
#include <algorithm>
#include <fmt/format.h>

#include "sim/scenario/yaml_reader.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> ring_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  const std::string common = common_params_text(p);
  ModeVolume v;
  if (p.cached > 0) {
    v.primitive = "ring P2P, N-1 steps (pass-KV, cached + new KV)";
    v.bytes = (n - 1) * p.B * (p.S + p.cached) / n * ckv;
    v.formula = fmt::format("(N-1)/N * B*(S + cached) * c_kv  [{}, cached={}, c_kv={}]", common, p.cached, ckv);
    return v;
  }
  v.primitive = "ring P2P, N-1 steps";
  v.bytes = (n - 1) * local * ckv;
  v.formula = fmt::format("(N-1)/N * B*S * c_kv  [{}, c_kv={}]", common, ckv);
  v.seed_bytes = p.B * p.S * ckv;
  v.seed_formula = "S * c_kv";
  v.note = "the seed's summary table counts S*c_kv, the rank's own block included";
  return v;
}

std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v = kv_allgather_volume(p);
  v.seed_bytes = v.bytes;
  v.seed_formula = "(N-1)/N * S * c_kv";
  return v;
}

// The all-to-alls move per-head Q, K, V (heads per GPU), whatever the KV cache's layout.
ModeVolume ulysses_like_volume(const CommParams& p, bool ulysses) {
  const double n = p.N, local = p.B * p.S / n;
  const double d = p.head_dim, hq = p.q_heads, hkv = p.kv_heads;
  const double u = ulysses ? n : p.ulysses_degree, rings = n / u;
  const double kv_r = std::max(1.0, hkv / u);
  const double a2a = (u - 1) * local * d * p.s * (2 * hq / u + 2 * kv_r);
  const double ring = (rings - 1) * (p.B * p.S / rings) * 2 * kv_r * d * p.s;
  ModeVolume v;
  v.primitive = ulysses ? "all-to-all of Q, K, V and of O" : "all-to-all in Ulysses groups + ring across";
  v.bytes = a2a + ring;
  v.formula = fmt::format(
      "(u-1) * B*S/N * d * s * (2*h_q/u + 2*max(1, h_kv/u)) + (N/u-1) * B*S*u/N * 2*max(1, h_kv/u)*d*s  "
      "[{}, u={}, h_q={}, h_kv={}, d={}]",
      common_params_text(p), u, hq, hkv, d);
  return v;
}
std::optional<ModeVolume> ulysses_volume(const CommParams& p, const MobaCpPlan&) { return ulysses_like_volume(p, true); }
std::optional<ModeVolume> usp_volume(const CommParams& p, const MobaCpPlan&) { return ulysses_like_volume(p, false); }

// USP's buffers: the all-to-all's receive buffers (what the Ulysses groups deliver) and the ring's two K, V blocks
// across the groups (four in training, with dK, dV).
double usp_staging(const CommParams& p, bool training) {
  const double n = p.N, u = p.ulysses_degree, rings = n / u;
  const double kv_r = std::max(1.0, p.kv_heads / u);
  const double a2a = (u - 1) * (p.B * p.S / n) * p.head_dim * p.s * (2 * p.q_heads / u + 2 * kv_r);
  const double block = rings > 1 ? (p.B * p.S / rings) * 2 * kv_r * p.head_dim * p.s : 0;
  return a2a + (training ? 4 : 2) * block;
}

std::optional<ModeVolume> pass_q_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, local = p.B * p.S / n;
  const std::string common = common_params_text(p);
  ModeVolume v;
  if (!p.decode) {
    v.primitive = "Q around the ring (pass-Q), partial outputs back to their owners";
    v.bytes = (n - 1) * local * (2 * p.q_heads * p.head_dim * p.s + 4 * p.q_heads);
    v.formula = fmt::format("(N-1)/N * B*S * (2*h_q*d*s + 4*h_q)  [{}, h_q={}, d={}]", common, p.q_heads, p.head_dim);
    return v;
  }
  v.primitive = "Q around the ring (N-1 hops), partial outputs back to the owner";
  v.bytes = (n - 1) * p.B * p.q_heads * (p.head_dim * p.s + 4);
  v.formula = fmt::format("(N-1) * B * h_q * (d*s + 4)  [{}, h_q={}, d={}]", common, p.q_heads, p.head_dim);
  v.note = "per decode step, received by the token's owner (O and an fp32 log-sum-exp per head)";
  return v;
}

std::optional<ModeVolume> tree_volume(const CommParams& p, const MobaCpPlan&) {
  // Butterfly levels a rank receives in: log2 N, plus the fold-in step when N is not a power of two.
  const double n = p.N;
  int levels = 0, pow2 = 1;
  while (pow2 * 2 <= n) pow2 *= 2, ++levels;
  if (pow2 < n) ++levels;
  ModeVolume v;
  v.primitive = "tree all-reduce of (max, sum, numerator)";
  v.bytes = levels * p.B * p.q_heads * (4 + 4 + p.head_dim * p.s);
  v.formula = fmt::format("ceil-levels(N) * B * h_q * (4 + 4 + d*s)  [{}, levels={}, h_q={}, d={}]",
                          common_params_text(p), levels, p.q_heads, p.head_dim);
  v.note = "per decode step; max and sum in fp32";
  return v;
}

std::optional<ModeVolume> ring_backward_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  ModeVolume v;
  v.primitive = "ring P2P of K, V with dK, dV (N-1 steps) + dK, dV home";
  v.bytes = (2 * (n - 1) + 1) * local * ckv;
  v.formula = fmt::format("(2(N-1) + 1) * B*S/N * c_kv  [{}, c_kv={}]", common_params_text(p), ckv);
  return v;
}

std::optional<ModeVolume> allgather_backward_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  ModeVolume v;
  v.primitive = "AllGather of K, V + reduce-scatter of dK, dV";
  v.bytes = 2 * (n - 1) * local * ckv;
  v.formula = fmt::format("2 * (N-1)/N * B*S * c_kv  [{}, c_kv={}]", common_params_text(p), ckv);
  return v;
}

// USP's backward: the all-to-alls' volumes again, the ring backward across the groups: (2(r-1) + 1) ring blocks.
std::optional<ModeVolume> usp_backward_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, u = p.ulysses_degree, rings = n / u;
  const double kv_r = std::max(1.0, p.kv_heads / u), block = (p.B * p.S / rings) * 2 * kv_r * p.head_dim * p.s;
  const double a2a = (u - 1) * (p.B * p.S / n) * p.head_dim * p.s * (2 * p.q_heads / u + 2 * kv_r);
  ModeVolume v;
  v.primitive = "all-to-all of dO and of dQ, dK, dV in Ulysses groups + ring backward across (dK, dV home)";
  v.bytes = a2a + (2 * (rings - 1) + 1) * block;
  v.formula = fmt::format("(u-1) * B*S/N * d * s * (2*h_q/u + 2*max(1, h_kv/u)) + (2(N/u-1) + 1) * B*S*u/N * "
                          "2*max(1, h_kv/u)*d*s  [{}, u={}, h_q={}, h_kv={}, d={}]",
                          common_params_text(p), u, p.q_heads, p.kv_heads, p.head_dim);
  return v;
}

std::optional<ModeVolume> ulysses_backward_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v = ulysses_like_volume(p, true);
  v.primitive = "all-to-all of dO, then of dQ, dK, dV";
  return v;
}

void read_dense_plan(MapReader& d, CpPlan& plan) {
  plan.dense.auto_miss_rate_threshold = d.number_or("auto_miss_rate_threshold", 0.05);
  if (plan.dense.auto_miss_rate_threshold < 0 || plan.dense.auto_miss_rate_threshold > 1)
    d.fail("auto_miss_rate_threshold", "must be between 0 and 1");
  plan.dense.auto_by_miss_rate = d.choice_or("auto_rule", {"simulated", "miss-rate"}, "simulated") == "miss-rate";
  plan.dense.ulysses_degree = static_cast<int>(d.integer_or("ulysses_degree", 1, 1));
  plan.dense.partition = d.choice_or("partition", kPartitionNames, Partition::ZIGZAG);
  plan.dense.partition_given = d.has("partition");
}

// The all-to-all splits heads over the Ulysses degree: query heads must divide evenly; KV heads either divide
// evenly or are replicated (fewer KV heads than ranks, each rank taking one).
void check_dense(const KindCheck& c) {
  const CpAlgorithm algo = c.plan.dense.algorithm;
  if (algo != CpAlgorithm::ULYSSES && algo != CpAlgorithm::USP) return;
  const char* name = algorithm_name(algo);
  const int cp = c.parallel.cp, tp = c.parallel.tp;
  const int degree = algo == CpAlgorithm::ULYSSES ? cp : c.plan.dense.ulysses_degree;
  if (algo == CpAlgorithm::USP && cp % degree != 0)
    c.fail_plan("ulysses_degree", fmt::format("must divide cp ({}), got {}", cp, degree));
  const int q_heads = c.model.n_heads / tp, kv_heads = std::max(1, c.model.n_kv_heads / tp);
  if (q_heads % degree != 0)
    c.fail_plan("algorithm", fmt::format("{} needs the query heads per GPU (n_heads/tp = {}) divisible by the "
                                         "Ulysses degree ({})",
                                         name, q_heads, degree));
  if (kv_heads % degree != 0 && degree % kv_heads != 0)
    c.fail_plan("algorithm", fmt::format("{} needs the KV heads per GPU ({}) and the Ulysses degree ({}) to divide "
                                         "one another",
                                         name, kv_heads, degree));
}

std::vector<std::pair<std::string, std::string>> dense_summary_fields(const CpPlan& plan) {
  return {{"partition", partition_name(plan.dense.partition)}};
}

}  // namespace

AttentionKindDef dense_attention_kind() {
  AttentionKindDef k;
  k.name = "dense";
  k.description = "full causal attention";
  k.default_algorithm = CpAlgorithm::RING;
  k.modes = {
      {CpAlgorithm::RING, lower_dense_ring, lower_dense_ring_backward, ring_volume, ring_backward_volume},
      {CpAlgorithm::ALLGATHER, lower_dense_allgather, lower_dense_allgather_backward, allgather_volume,
       allgather_backward_volume},
      {CpAlgorithm::ULYSSES, lower_dense_ulysses, lower_dense_ulysses_backward, ulysses_volume,
       ulysses_backward_volume},
      {.algorithm = CpAlgorithm::USP, .forward = lower_dense_usp, .backward = lower_dense_usp_backward,
       .volume = usp_volume, .backward_volume = usp_backward_volume, .staging = usp_staging},
      {.algorithm = CpAlgorithm::PASS_Q, .forward = lower_dense_pass_q, .volume = pass_q_volume,
       .decode = decode_dense_pass_q, .decode_home = DecodeHome::STEP_OWNER},
      {.algorithm = CpAlgorithm::TREE, .volume = tree_volume, .decode = decode_dense_tree,
       .decode_home = DecodeHome::EVERY_RANK},
  };
  k.resolved_algorithms = {CpAlgorithm::AUTO};  // pass-KV or pass-Q, chosen per run (sim/cli/cmd_run_auto.cpp)
  k.read_plan = read_dense_plan;
  k.check = check_dense;
  k.summary_fields = dense_summary_fields;
  k.token_layout = [](const CpPlan& plan) { return plan.dense.partition; };  // cp.dense.partition, every algorithm
  return k;
}

}  // namespace cpsim
