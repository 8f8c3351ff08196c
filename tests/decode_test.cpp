// Decode with the KV cache sharded over CP ranks: tree attention merges partials in ceil(log2 N) levels, pass-Q
// walks Q around the ring in N-1 hops; per-rank CP bytes per decode step equal the closed forms. Oracle: the
// algorithms' definitions (workloads/decode.hpp) and the byte counts derived beside each assertion.
#include <catch2/catch.hpp>

#include <set>

#include "support.hpp"

using namespace cpsim;

namespace {

const char* kDecode = R"(
name: decode
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8, calibration: ideal}
model: models/llama3-8b.yaml
run: {phase: decode, context_len: 128K, new_tokens: 2, batch: 1, dtype: bf16}
parallel: {cp: 8, tp: 1}
cp: {dense: {algorithm: tree}}
)";

// Distinct algorithm steps of the flows named `name` in layer 0.
std::set<int> steps_of(const test::Run& r, const std::string& name) {
  std::set<int> steps;
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::FLOW && t.layer == 0 && r.graph.name(t.name) == name) steps.insert(t.step);
  return steps;
}

}  // namespace

TEST_CASE("decode: tree attention reduces in ceil(log2 N) levels, three partials per level", "[decode][tree]") {
  const test::Run r = test::simulate(test::scenario_from(kDecode, {"model.layers=2"}));
  CHECK(steps_of(r, "tree max").size() == 3);  // ceil(log2 8)
  CHECK(steps_of(r, "tree sum").size() == 3);
  CHECK(steps_of(r, "tree numerator").size() == 3);
  // Each level a rank receives max and sum (32 heads x 4 B each) and the numerator (32 x 128 x 2 B): 3 x 8448 B.
  REQUIRE(r.metrics.volumes.size() == 1);
  CHECK(r.metrics.volumes[0].simulated_bytes == 3 * 32 * (4 + 4 + 128 * 2));
  CHECK(*r.metrics.volumes[0].formula_bytes == r.metrics.volumes[0].simulated_bytes);
  CHECK(r.metrics.layers.size() == 2u * 2);  // new_tokens x layers
}

TEST_CASE("decode: pass-q walks Q around the ring in N-1 hops", "[decode][pass-q]") {
  const test::Run r = test::simulate(test::scenario_from(kDecode, {"model.layers=2", "cp.dense.algorithm=pass-q"}));
  CHECK(steps_of(r, "pass-q q").size() == 7);  // N-1
  // The owner receives N-1 partial outputs of 32 heads x (128 x 2 B + 4 B log-sum-exp).
  CHECK(r.metrics.volumes[0].simulated_bytes == 7 * 32 * (128 * 2 + 4));
  CHECK(*r.metrics.volumes[0].formula_bytes == r.metrics.volumes[0].simulated_bytes);
}

TEST_CASE("decode: tree and pass-q are decode algorithms, and decode needs one", "[decode][errors]") {
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"cp.dense.algorithm=tree"}),
                    Catch::Contains("cp.dense.algorithm: tree is a decode algorithm (run.phase: decode)"));
  CHECK_THROWS_WITH(test::scenario_from(kDecode, {"cp.dense.algorithm=ring"}),
                    Catch::Contains("decode needs cp.dense.algorithm tree or pass-q, got ring"));
}

namespace {

// Two CP ranks on two nodes joined by a slow NIC (300 us one way), so the tree all-reduce is significant.
const char* kHopB = R"(
name: hop-b
platform: {preset: hgx-h100, nodes: 2, gpus_per_node: 1, nic_latency: 300us, calibration: ideal}
model: models/llama3-8b.yaml
run: {phase: decode, context_len: 128K, new_tokens: 1, batch: 1, dtype: bf16}
parallel: {cp: 2, tp: 1}
cp: {dense: {algorithm: tree}}
)";

// Hand derivation, ideal H100 roofline, B = 1, one layer: q = qkv GEMM (4096 x 6144 weights read), a = partial
// attention over the 64K-token shard (its K, V: 65536 x 2 x 1024 x 2 B, plus Q and O), c = the one-level tree
// all-reduce (300 us + the max, sum and numerator, 128 + 128 + 8192 B, sharing the 50 GB/s NIC), o = o_proj
// (4096 x 4096), f = the SwiGLU FFN (4096 x 28672 and 14336 x 4096); the merge costs nothing.
struct HopB {
  double peak = 989e12, hbm = 3.35e12 * 0.8, s = 2;
  double t(double flops, double bytes, double eff) const { return std::max(flops / (peak * eff), bytes / hbm); }
  double gemm(double k, double n) const { return t(2 * k * n, (k * n + k + n) * s, 0.75); }
  double q = gemm(4096, 6144), o = gemm(4096, 4096), f = gemm(4096, 2 * 14336) + gemm(14336, 4096);
  double a = t(4 * 65536.0 * 32 * 128, 65536.0 * 2 * 1024 * s + 2 * 4096 * s, 0.6);
  double c = 300e-6 + (128 + 128 + 8192) / 50e9;
  // m = 1: everything in sequence.
  double one() const { return q + a + c + o + f; }
  // m = 2: the stream runs both micro-batches' qkv + attention (2(q + a)); micro-batch 0's all-reduce (c > q + a)
  // ends at q + a + c, its o_proj runs while micro-batch 1's all-reduce (from 2(q + a)) is in flight; micro-batch
  // 1's o_proj follows at 2(q + a) + c (q + a > o), then both FFNs: 2(q + a) + c + o + 2f.
  double two() const { return 2 * (q + a) + c + o + 2 * f; }
};

}  // namespace

TEST_CASE("decode micro-batches: one batch runs attention, all-reduce, o_proj and FFN in sequence", "[decode][hop-b]") {
  const HopB o;
  REQUIRE(o.c > o.q + o.a);  // the regime the m = 2 derivation assumes
  const test::Run r = test::simulate(test::scenario_from(kHopB, {"model.layers=1"}));
  CHECK(r.metrics.makespan_s == Approx(o.one()).epsilon(1e-6));
}

TEST_CASE("decode micro-batches: with m = 2 one batch's all-reduce hides behind the other's kernels", "[decode][hop-b]") {
  const HopB o;
  CHECK(o.two() < 2 * o.one() - o.c);  // HOP-B saves at least one all-reduce per layer
  const test::Run r = test::simulate(test::scenario_from(kHopB, {"model.layers=1", "run.micro_batches=2"}));
  CHECK(r.metrics.makespan_s == Approx(o.two()).epsilon(1e-6));
  CHECK(r.metrics.layers.size() == 2u);  // one entry per micro-batch's layer
}
