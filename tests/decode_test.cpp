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
  for (const Task& t : r.graph.tasks())
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
