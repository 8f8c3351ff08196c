// Training: forward then backward layers (last first), the backward CP volumes against their closed forms, and the
// activation memory of training (every layer's activations kept). Oracle: derivations beside each assertion.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cpsim;

namespace {
double volume_of(const test::Run& r, const std::string& algorithm) {
  for (const auto& v : r.metrics.volumes)
    if (v.cp_algorithm == algorithm) {
      REQUIRE(v.formula_bytes);
      CHECK(v.simulated_bytes == *v.formula_bytes);
      return v.simulated_bytes;
    }
  FAIL("no volume row for " << algorithm);
  return 0;
}
const double kBlock = 8192.0 * 2 * 1024 * 2;  // T = S/N = 8192 tokens of K and V (d_kv = 1024, bf16): 32 MiB
}  // namespace

TEST_CASE("train: ring backward returns dK/dV around the ring", "[train][ring]") {
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario, {"model.layers=2", "run.phase=train"}));
  CHECK(r.metrics.layers.size() == 4u);  // 2 forward + 2 backward
  CHECK(r.metrics.layers[2].info.cp_algorithm == "ring-backward");
  CHECK(volume_of(r, "ring") == 3 * kBlock);                      // (N-1) blocks
  CHECK(volume_of(r, "ring-backward") == (2 * 3 + 1) * kBlock);  // K,V + dK,dV for N-1 steps, then dK,dV home
}

TEST_CASE("train: allgather backward reduce-scatters dK/dV", "[train][allgather]") {
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=2", "run.phase=train", "cp.dense.algorithm=allgather"}));
  CHECK(volume_of(r, "allgather-backward") == 2 * 3 * kBlock);  // AllGather of K,V + reduce-scatter of dK,dV
}

TEST_CASE("train: activations of every layer are kept", "[train][memory]") {
  const Scenario prefill = test::scenario_from(test::kSmallScenario, {"model.layers=4"});
  const Scenario train = test::scenario_from(test::kSmallScenario, {"model.layers=4", "run.phase=train"});
  const auto a = prefill_memory(test::inputs_of(prefill)), b = prefill_memory(test::inputs_of(train));
  CHECK(b.activations_bytes == 4 * a.activations_bytes);
  CHECK(b.weights_bytes == a.weights_bytes);
}
