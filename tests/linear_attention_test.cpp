// Linear attention costed as it runs (chunked, linear in S/N) so that the CP state exchange shows in the makespan:
// LASP-1's serial chain of N-1 state hops against LASP-2's one (node-aware) AllGather overlapped with the local
// work, 64 GPUs over 8 H100 nodes, 2048K tokens, linear-8b, one layer. Oracle: the hand derivation below.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cpsim;

namespace {

const char* kLinear = R"(
name: lasp
platform: {preset: hgx-h100, nodes: 8, gpus_per_node: 8, calibration: ideal}
model: models/linear-8b.yaml
run: {phase: prefill, seq_len: 2048K, batch: 1, dtype: bf16}
parallel: {cp: 64, tp: 1}
cp: {linear: {algorithm: lasp2}}
)";

// Ideal H100 roofline; T = 2048K / 64 = 32768 tokens per rank, H = 32 heads of d = 128 (K, V heads too), chunk
// C = 64, state b = H d^2 s = 1 MiB.
struct Oracle {
  double T = 32768, H = 32, d = 128, s = 2, C = 64, peak = 989e12, hbm = 3.35e12 * 0.8;
  double b = H * d * d * s;
  double t(double flops, double bytes, double eff) const { return std::max(flops / (peak * eff), bytes / hbm); }
  double gemm(double k, double n) const { return t(2 * T * k * n, (k * n + T * k + T * n) * s, 0.75); }
  // State update K^T V or application Q M: 2 T H d^2 flops, reads two [T, H, d] operands and the state.
  double g() const { return t(2 * T * H * d * d, 2 * T * H * d * s + b, 0.75); }
  // Intra-chunk: T/C chunks of C^2 pairs, reads Q, writes O, reads K and V (4096 wide each).
  double a() const { return t(4 * T * C * H * d, (2 * T * 4096 + T * 2 * 4096) * s, 0.6); }
  double p(double states) const { return states * b / hbm; }  // prefix-sum memory pass
  double dense() const {  // qkv (4096 -> 3 x 4096), o_proj, SwiGLU FFN
    return gemm(4096, 3 * 4096) + gemm(4096, 4096) + gemm(4096, 2 * 14336) + gemm(14336, 4096);
  }
  // LASP-1: every rank's local part (state, intra-chunk, own inter-chunk: 2g + a) ends long before the chain
  // reaches it, so the last rank finishes at 2g + a + 64 prefix passes (of 2 states) + 56 NVLink hops
  // (2 us + b / 450 GB/s) + 7 node-crossing hops (GPU 8i+7 -> 8i+8: NVLink to the rail of the receiver, then
  // the NIC: 2 + 5 us + b / 50 GB/s), then its inter-chunk output g.
  double lasp1() const {
    return dense() + 2 * g() + a() + 64 * p(2) + 56 * (2e-6 + b / 450e9) + 7 * (7e-6 + b / 50e9) + g();
  }
  // LASP-2: after the state (g), the all-gather across the 8 nodes per rail (7 steps of 5 us + b / 50 GB/s), then
  // inside each node of the 8 states each rank holds (7 steps of 2 us + 8b / 450 GB/s), overlapped with the
  // intra-chunk and own inter-chunk work (g + a, longer); then the prefix sum over 64 states and the output g.
  double lasp2() const {
    const double gather = 7 * (5e-6 + b / 50e9) + 7 * (2e-6 + 8 * b / 450e9);
    return dense() + std::max(g() + gather, 2 * g() + a()) + p(64) + g();
  }
};

}  // namespace

TEST_CASE("linear: LASP-1's serial state chain is exposed at 64 GPUs", "[linear][lasp1][oracle]") {
  const test::Run r = test::simulate(test::scenario_from(kLinear, {"model.layers=1", "cp.linear.algorithm=lasp1"}));
  CHECK(r.metrics.makespan_s == Approx(Oracle{}.lasp1()).epsilon(1e-6));
  CHECK(r.metrics.volumes[0].simulated_bytes == Oracle{}.b);  // bytes unchanged: one state from the left
}

TEST_CASE("linear: LASP-2's all-gather hides behind the local chunks and beats LASP-1", "[linear][lasp2][oracle]") {
  const Oracle o;
  CHECK(o.lasp2() < o.lasp1() - 400e-6);  // the chain (~0.45 ms) against a hidden gather, per layer
  const test::Run r = test::simulate(test::scenario_from(kLinear, {"model.layers=1"}));
  CHECK(r.metrics.makespan_s == Approx(o.lasp2()).epsilon(1e-6));
  CHECK(r.metrics.volumes[0].simulated_bytes == 63 * o.b);  // (N-1) * b, as the single ring
}

TEST_CASE("linear: the intra-chunk cost is linear in S/N (chunks of attention.linear_chunk)", "[linear]") {
  // Oracle: L/C chunks of C^2 pairs per rank: 4 * T * C * H * d flops; doubling C doubles it, S/N = 32768.
  const Scenario s = test::scenario_from(kLinear, {"model.layers=1", "model.attention.linear_chunk=128"});
  CHECK(s.model.attention.linear_chunk == 128);
  const TaskGraph g = generate_workload(test::inputs_of(s), s.platform.gpu_count());
  double flops = -1;
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::COMPUTE && g.name(t.name) == "intra-chunk attention") flops = t.flops;
  CHECK(flops == 4.0 * 32768 * 128 * 32 * 128);
}

namespace {

// A hybrid of linear attention and softmax layers on 4 GPUs (Llama-3-8B's shape, the ideal machine).
const char* kHybrid = R"(
name: hybrid
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 4, calibration: ideal}
model: {name: hybrid, layers: 2, d_model: 4096, n_heads: 32, n_kv_heads: 8, head_dim: 128, ffn_dim: 14336,
        vocab: 128256, attention: {pattern: [linear, dense]}}
run: {phase: prefill, seq_len: 32K, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
)";

}  // namespace

TEST_CASE("lasp2h: the softmax layers of a hybrid AllGather their KV, the linear layers their states", "[linear]") {
  // The seed's LASP-2H: one primitive, AllGather, for both kinds. Naming it sets cp.dense.algorithm.
  const Scenario s = test::scenario_from(std::string(kHybrid) + "cp: {linear: {algorithm: lasp2h}}\n");
  CHECK(s.cp.dense.algorithm == CpAlgorithm::ALLGATHER);
  CHECK(s.cp.algorithm(AttentionKind::LINEAR) == CpAlgorithm::LASP2H);
  CHECK_THROWS_WITH(test::scenario_from(std::string(kHybrid) + "cp: {linear: {algorithm: lasp2h}, dense: {algorithm: ring}}\n"),
                    Catch::Contains("cp.linear.algorithm: lasp2h runs the softmax layers with AllGather-KV; "
                                    "cp.dense.algorithm is ring"));
}

TEST_CASE("lasp2h simulated: each kind's bytes equal its closed form", "[linear]") {
  const test::Run r = test::simulate(test::scenario_from(std::string(kHybrid) + "cp: {linear: {algorithm: lasp2h}}\n"));
  REQUIRE(r.metrics.volumes.size() == 2);
  for (const VolumeRow& v : r.metrics.volumes) {
    INFO(v.layer_kind << " / " << v.cp_algorithm);
    // dense/allgather: (N-1)/N * S * c_kv = 3 x 8192 x 4 KiB; linear/lasp2h: (N-1) x 32 x 128^2 x 2 B states.
    CHECK(v.simulated_bytes == (v.layer_kind == "dense" ? 3 * 8192 * 4096.0 : 3 * 32 * 128 * 128 * 2.0));
    CHECK(*v.formula_bytes == v.simulated_bytes);
  }
}

TEST_CASE("ssm: Mamba-2 layers pass a [H, N, d] state, LASP-2 style", "[linear][ssm]") {
  const test::Run r = test::simulate(test::scenario_from(
      kHybrid, {"model.attention.pattern=[ssm]", "model.layers=1", "model.attention.ssm_state_dim=64"}));
  // (N-1) states of 32 heads x 64 x 128 x 2 B = 3 x 512 KiB, independent of S.
  REQUIRE(r.metrics.volumes.size() == 1);
  CHECK(r.metrics.volumes[0].cp_algorithm == "lasp2");
  CHECK(r.metrics.volumes[0].simulated_bytes == 3 * 32 * 64 * 128 * 2.0);
  CHECK(*r.metrics.volumes[0].formula_bytes == r.metrics.volumes[0].simulated_bytes);
  // The chunk state B^T X over the rank's 8192 tokens: 2 x 8192 x 32 x 64 x 128 flops.
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::COMPUTE && r.graph.name(t.name) == "chunk state") CHECK(t.flops == 2.0 * 8192 * 32 * 64 * 128);
  // KV cache: the state, whatever the sequence length.
  CHECK(r.metrics.ranks[0].memory.kv_cache_bytes == 32.0 * 64 * 128 * 2);
}
