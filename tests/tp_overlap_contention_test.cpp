// TP communication overlap (workloads/tp_comm_overlap.hpp) beside a CP transfer, in the four contention modes, on
// two GPUs of one HGX node (ideal calibration: B = 450 GB/s per direction, 2 us route latency, 132 SMs).
//
// The case: a TP2 overlapped all-gather of shard S = 90 MB per rank with a GEMM chunk of d = 0.1 ms per shard, and
// a CP transfer of a = 180 MB from GPU 0 to GPU 1 (added first), all ready at t = 0. Step 0: each GPU multiplies
// its own shard (0 .. d) while sending it to the other (TP 0->1 shares GPU 0's port up and GPU 1's port down with
// the CP transfer; TP 1->0 has its links to itself); step 1: each GPU multiplies the shard it received, once it
// has arrived. Oracles derived by hand beside each assertion.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/tp_comm_overlap.hpp"

using namespace cpsim;

namespace {

constexpr double S = 90e6, a = 180e6, d = 0.1e-3, B = 450e9, lat = 2e-6;

const char* kTwoGpus = test::kTwoGpuScenario;

struct Overlap {
  double cp_end_s = 0;
  double gemm_end_s[2] = {0, 0};  // per GPU: the end of its second chunk
  double tp_arrival_s[2] = {0, 0};  // per GPU: when the other rank's shard arrived
};

Overlap run_overlap(const std::string& mode) {
  const Scenario s = test::scenario_from(kTwoGpus, {"contention.mode=" + mode});
  TaskGraph g(s.platform.gpu_count());
  const TaskId cp = g.add_flow(0, 1, a, Traffic::CP, "cp", -1, 0);
  const ChunkedGemm gemm{"qkv", KernelCost{d, 1, 1}, -1};
  const RankTasks done =
      allgather_overlapped(g, {0, 1}, S, gemm, CollectiveTag{Traffic::TP, "tp allgather", -1}, RankTasks(2));
  const ExecutionResult r = execute(g, s.platform, s.contention);
  Overlap o;
  o.cp_end_s = r.finish_s[cp];
  for (int gpu = 0; gpu < 2; ++gpu)
    for (TaskId id : done[gpu])
      if (g.task(id).kind == TaskKind::COMPUTE) o.gemm_end_s[gpu] = r.finish_s[id];
  for (TaskId id = 0; id < g.task_count(); ++id)
    if (g.task(id).traffic == Traffic::TP) o.tp_arrival_s[g.task(id).peer] = r.finish_s[id];
  return o;
}

}  // namespace

TEST_CASE("tp overlap: fair shares the port, the shard behind the CP transfer arrives late", "[contention][oracle]") {
  const Overlap o = run_overlap("fair");
  // TP 1->0 alone: lat + S/B = 0.202 ms; GPU 0's second chunk starts then (after its first, at d): ends + d.
  CHECK(o.tp_arrival_s[0] == Approx(lat + S / B).epsilon(1e-9));
  CHECK(o.gemm_end_s[0] == Approx(lat + S / B + d).epsilon(1e-9));
  // TP 0->1 and CP at B/2 each until TP has sent S: lat + 2S/B = 0.402 ms; GPU 1's chunk then ends d later.
  CHECK(o.tp_arrival_s[1] == Approx(lat + 2 * S / B).epsilon(1e-9));
  CHECK(o.gemm_end_s[1] == Approx(lat + 2 * S / B + d).epsilon(1e-9));
  // CP then alone for a - S: lat + (a + S)/B = 0.602 ms.
  CHECK(o.cp_end_s == Approx(lat + (a + S) / B).epsilon(1e-9));
}

TEST_CASE("tp overlap: exclusive serialises the classes on both GPUs", "[contention][oracle]") {
  const Overlap o = run_overlap("exclusive");
  // CP (first come) runs alone: lat + a/B = 0.402 ms. Both TP flows touch GPUs 0 and 1, so both wait for it, then
  // take lat + S/B each on their own links; each second chunk follows: T_CP + T_TP + d.
  CHECK(o.cp_end_s == Approx(lat + a / B).epsilon(1e-9));
  for (int gpu = 0; gpu < 2; ++gpu) {
    CHECK(o.tp_arrival_s[gpu] == Approx((lat + a / B) + (lat + S / B)).epsilon(1e-9));
    CHECK(o.gemm_end_s[gpu] == Approx((lat + a / B) + (lat + S / B) + d).epsilon(1e-9));
  }
}

TEST_CASE("tp overlap: staggered runs each class as if alone", "[contention][oracle]") {
  const Overlap o = run_overlap("staggered");
  // Each TP shard arrives at lat + S/B = 0.202 ms (> d), each second chunk ends d later; CP at lat + a/B.
  for (int gpu = 0; gpu < 2; ++gpu) {
    CHECK(o.tp_arrival_s[gpu] == Approx(lat + S / B).epsilon(1e-9));
    CHECK(o.gemm_end_s[gpu] == Approx(lat + S / B + d).epsilon(1e-9));
  }
  CHECK(o.cp_end_s == Approx(lat + a / B).epsilon(1e-9));
}

TEST_CASE("tp overlap: subtractive takes link bandwidth and SMs from the GEMM chunks", "[contention][oracle]") {
  const Overlap o = run_overlap("subtractive");
  // Defaults: NC = 16 channels per comm kernel, v = 0.5 GB/s, C = 1 MiB, c0 = 64 KiB, b_channel = 25 GB/s:
  // V = 16 x 0.5e9 x (1 + 1/16) = 8.5 GB/s. A link with one kernel offers L1 = min(B - V, 16 x 25e9) = 400 GB/s,
  // with two L2 = min(B - 2V, 2 x 16 x 25e9) = 433 GB/s (216.5 GB/s each).
  const double V = 16 * 0.5e9 * (1 + 1.0 / 16), L1 = std::min(B - V, 16 * 25e9), L2 = std::min(B - 2 * V, 800e9);
  CHECK(L1 == 400e9);
  // TP 1->0 alone on its links: lat + S/L1 = 0.227 ms.
  CHECK(o.tp_arrival_s[0] == Approx(lat + S / L1).epsilon(1e-9));
  // TP 0->1 beside CP: lat + S/(L2/2) = 0.418 ms; CP then alone on L1 for a - S.
  CHECK(o.tp_arrival_s[1] == Approx(lat + S / (L2 / 2)).epsilon(1e-9));
  CHECK(o.cp_end_s == Approx(lat + S / (L2 / 2) + (a - S) / L1).epsilon(1e-9));
  // GEMM chunks: while TP and CP flows touch a GPU, 2 comm kernels hold 2 x 16 of its 132 SMs: d x 132/100; with
  // CP alone, d x 132/116. GPU 0's second chunk runs 0.227 .. (TP 0->1 and CP still in flight) at 132/100. GPU 1's
  // starts when TP 0->1 arrives, with only CP left: 132/116.
  CHECK(o.gemm_end_s[0] == Approx(lat + S / L1 + d * 132 / 100).epsilon(1e-9));
  CHECK(o.gemm_end_s[1] == Approx(lat + S / (L2 / 2) + d * 132 / 116).epsilon(1e-9));
}

TEST_CASE("tp overlap: exclusive is Megatron's rule, TP overlap off beside CP", "[contention][scenario]") {
  // Oracle: cp-overview.md, route 1 (Megatron raises an error when CP and tp_comm_overlap are both on).
  const std::string yaml = test::kSmallScenario;
  const std::vector<std::string> plan = {"parallel.cp=2", "parallel.tp=2", "parallel.sequence_parallel=true",
                                         "parallel.tp_comm_overlap=true"};
  auto with = [&](const std::string& mode) {
    auto o = plan;
    o.push_back("contention.mode=" + mode);
    return test::scenario_from(yaml, o);
  };
  const Scenario exclusive = with("exclusive"), fair = with("fair");
  CHECK_FALSE(exclusive.parallel.tp_comm_overlap);
  CHECK(exclusive.parallel.tp_comm_overlap_off.find("Megatron") != std::string::npos);
  CHECK(fair.parallel.tp_comm_overlap);
  CHECK(fair.parallel.tp_comm_overlap_off.empty());
  // Without CP there is nothing to exclude: the overlap stays.
  auto no_cp = plan;
  no_cp[0] = "parallel.cp=1";
  no_cp.push_back("contention.mode=exclusive");
  CHECK(test::scenario_from(yaml, no_cp).parallel.tp_comm_overlap);
}
