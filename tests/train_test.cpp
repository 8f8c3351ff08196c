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
  CHECK(r.metrics.layers[2].info.algorithm_name() == "ring-backward");
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
  CHECK(a.gradients_bytes == 0);
  CHECK(b.gradients_bytes == b.weights_bytes);                   // one bf16 gradient per bf16 weight
  CHECK(b.optimizer_states_bytes == b.weights_bytes / 2 * 12);  // fp32 master, m, v per parameter
}

namespace {
// llama3-8b layer weights on one GPU at tp = 2: attention 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 41,943,040
// params, SwiGLU FFN 3 x 4096 x 14336 = 176,160,768; (41,943,040 + 176,160,768) / 2 x 2 bytes.
constexpr double kLayerGradBytes = (41943040.0 + 176160768.0) / 2 * 2;

double dp_sent(const test::Run& r, int gpu) {
  return r.metrics.ranks[gpu].bytes_sent[static_cast<std::size_t>(Traffic::DP)];
}
}  // namespace

TEST_CASE("train: gradients are all-reduced over the DP x CP group, per layer", "[train][grad_sync]") {
  // dp 2 x cp 2 x tp 2 on 8 GPUs: both replicas simulated; each TP rank's group has dp x cp = 4 GPUs, so a ring
  // all-reduce sends 2 x 3/4 of the layer's gradient bytes per GPU, for each of the 2 layers.
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=2", "run.phase=train", "run.seq_len=16K", "parallel.cp=2", "parallel.tp=2",
                             "parallel.dp=2"}));
  REQUIRE(r.metrics.ranks.size() == 8u);
  for (int gpu = 0; gpu < 8; ++gpu) CHECK(dp_sent(r, gpu) == 2 * 1.5 * kLayerGradBytes);
  CHECK(r.metrics.ranks[5].dp_rank == 1);
  // Overlap: the last layer's bucket starts while the first layer's backward still computes.
  double first_dp_start = 1e300, last_compute_end = 0;
  for (std::size_t i = 0; i < r.graph.task_count(); ++i) {
    const Task& t = r.graph.task(static_cast<TaskId>(i));
    if (t.traffic == Traffic::DP) first_dp_start = std::min(first_dp_start, r.result.start_s[i]);
    if (t.kind == TaskKind::COMPUTE) last_compute_end = std::max(last_compute_end, r.result.finish_s[i]);
  }
  CHECK(first_dp_start < last_compute_end);
}

TEST_CASE("train: grad_sync end reduces every layer after the backward", "[train][grad_sync]") {
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=2", "run.phase=train", "run.seq_len=16K", "parallel.cp=4",
                             "parallel.grad_sync=end"}));
  // dp 1: the group is the CP group (4 GPUs, tp 1: whole layers): 2 x 3/4 x 2 layers x 2 x the tp = 2 bytes above.
  for (int gpu = 0; gpu < 4; ++gpu) CHECK(dp_sent(r, gpu) == 2 * 1.5 * 2 * kLayerGradBytes);
  double first_dp_start = 1e300, last_compute_end = 0;
  for (std::size_t i = 0; i < r.graph.task_count(); ++i) {
    const Task& t = r.graph.task(static_cast<TaskId>(i));
    if (t.traffic == Traffic::DP) first_dp_start = std::min(first_dp_start, r.result.start_s[i]);
    if (t.kind == TaskKind::COMPUTE) last_compute_end = std::max(last_compute_end, r.result.finish_s[i]);
  }
  CHECK(first_dp_start >= last_compute_end);
}
