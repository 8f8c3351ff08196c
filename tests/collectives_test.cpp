// Each collective run alone on one H100 node (NVLink 450 GB/s per direction per GPU port, 2 us GPU-to-GPU), checked
// against its closed form (workloads/collectives.hpp) and its per-rank received bytes.
#include <catch2/catch.hpp>

#include <functional>

#include "support.hpp"
#include "workloads/collectives.hpp"

using namespace cpsim;

namespace {

constexpr double kLatency_s = 2e-6, kBw_Bps = 450e9;

struct CollectiveRun {
  double makespan_s = 0;
  std::vector<double> received_bytes;  // per GPU
  std::size_t flows = 0;
};

using Lowering = std::function<RankTasks(TaskGraph&, const std::vector<int>&, const CollectiveTag&, const RankTasks&)>;

CollectiveRun run_alone(int n, const Lowering& lower) {
  const Scenario s = test::scenario_from(test::kSmallScenario);
  TaskGraph g(s.platform.gpu_count());
  std::vector<int> gpus(n);
  for (int r = 0; r < n; ++r) gpus[r] = r;
  lower(g, gpus, {Traffic::CP, "collective", -1}, RankTasks(n));
  const ExecutionResult result = execute(g, s.platform);
  CollectiveRun out{result.makespan_s, std::vector<double>(s.platform.gpu_count(), 0), g.flow_count()};
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::FLOW) out.received_bytes[t.peer] += t.bytes;
  return out;
}

}  // namespace

TEST_CASE("collectives: ring all-gather is (n-1) steps of one block", "[collectives][oracle]") {
  const double block = 64e6;
  const auto r = run_alone(8, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return ring_allgather(g, gpus, block, tag, ready);
  });
  CHECK(r.flows == 8u * 7);
  CHECK(r.received_bytes[3] == 7 * block);                                        // (n-1) * block
  CHECK(r.makespan_s == Approx(7 * (kLatency_s + block / kBw_Bps)).epsilon(1e-9));  // (n-1)(a + b/B)
}

TEST_CASE("collectives: direct all-gather shares each port among n-1 flows", "[collectives][oracle]") {
  const double block = 64e6;
  const auto r = run_alone(4, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return direct_allgather(g, gpus, block, tag, ready);
  });
  CHECK(r.flows == 4u * 3);
  CHECK(r.received_bytes[0] == 3 * block);
  // Three flows leave (and enter) each port at once, max-min gives each B/3: a + 3b/B.
  CHECK(r.makespan_s == Approx(kLatency_s + 3 * block / kBw_Bps).epsilon(1e-9));
}

TEST_CASE("collectives: ring reduce-scatter and all-reduce move (n-1)/n of the buffer per pass", "[collectives][oracle]") {
  const double bytes = 80e6;
  const auto rs = run_alone(4, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return ring_reduce_scatter(g, gpus, bytes, tag, ready);
  });
  CHECK(rs.received_bytes[1] == 3 * bytes / 4);
  CHECK(rs.makespan_s == Approx(3 * (kLatency_s + bytes / 4 / kBw_Bps)).epsilon(1e-9));
}

TEST_CASE("collectives: ring all-reduce is a reduce-scatter then an all-gather", "[collectives][oracle]") {
  const double bytes = 80e6;
  const auto ar = run_alone(4, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return ring_allreduce(g, gpus, bytes, tag, ready);
  });
  CHECK(ar.received_bytes[2] == 2 * 3 * bytes / 4);                                    // 2(n-1)/n * bytes
  CHECK(ar.makespan_s == Approx(6 * (kLatency_s + bytes / 4 / kBw_Bps)).epsilon(1e-9));  // 2(n-1)(a + b/(nB))
}

TEST_CASE("collectives: pairwise all-to-all is n-1 steps of one pair block", "[collectives][oracle]") {
  const double pair = 10e6;
  const auto r = run_alone(8, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return pairwise_alltoall(g, gpus, pair, tag, ready);
  });
  CHECK(r.flows == 8u * 7);
  CHECK(r.received_bytes[5] == 7 * pair);
  CHECK(r.makespan_s == Approx(7 * (kLatency_s + pair / kBw_Bps)).epsilon(1e-9));
}

TEST_CASE("collectives: skewed all-to-all is paced by the hot rank", "[collectives][oracle]") {
  // 4 ranks; every rank sends H to rank 0 and L to the others. Rank 0 receives H in each of the 3 steps on its one
  // down port and every step waits for rank 0's previous one: 3 (a + H/B) (the sum of per-step maxima).
  const double H = 40e6, L = 5e6;
  std::vector<std::vector<double>> bytes(4, std::vector<double>(4, L));
  for (int r = 0; r < 4; ++r) bytes[r][0] = H, bytes[r][r] = 0;
  const auto r = run_alone(4, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return pairwise_alltoallv(g, gpus, bytes, tag, ready);
  });
  CHECK(r.flows == 4u * 3);
  CHECK(r.received_bytes[0] == 3 * H);
  CHECK(r.received_bytes[2] == 3 * L);
  CHECK(r.makespan_s == Approx(3 * (kLatency_s + H / kBw_Bps)).epsilon(1e-9));
}

TEST_CASE("collectives: tree all-reduce takes ceil(log2 n) butterfly steps", "[collectives][oracle]") {
  const double bytes = 1e6;
  CHECK(tree_allreduce_steps(8) == 3);
  CHECK(tree_allreduce_steps(2) == 1);
  CHECK(tree_allreduce_steps(6) == 4);  // fold 2 ranks in, 2 butterfly levels, send 2 results out
  const auto r = run_alone(8, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return tree_allreduce(g, gpus, bytes, tag, ready);
  });
  CHECK(r.flows == 8u * 3);
  CHECK(r.received_bytes[7] == 3 * bytes);                                         // log2(n) full buffers
  CHECK(r.makespan_s == Approx(3 * (kLatency_s + bytes / kBw_Bps)).epsilon(1e-9));  // log2(n)(a + b/B)
}

TEST_CASE("collectives: tree all-reduce on 6 ranks folds the extra ranks in and out", "[collectives][oracle]") {
  const double bytes = 1e6;
  const auto r = run_alone(6, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return tree_allreduce(g, gpus, bytes, tag, ready);
  });
  CHECK(r.flows == 2u + 4 * 2 + 2);  // fold, 2 butterfly levels over 4 ranks, unfold
  CHECK(r.makespan_s == Approx(4 * (kLatency_s + bytes / kBw_Bps)).epsilon(1e-9));
}

TEST_CASE("collectives: direct reduce-scatter shares each port among n-1 flows", "[collectives][oracle]") {
  const double bytes = 80e6;
  const auto r = run_alone(4, [&](auto& g, auto& gpus, auto& tag, auto& ready) {
    return direct_reduce_scatter(g, gpus, bytes, tag, ready);
  });
  CHECK(r.received_bytes[2] == 3 * bytes / 4);
  CHECK(r.makespan_s == Approx(kLatency_s + 3 * bytes / 4 / kBw_Bps).epsilon(1e-9));  // a + (n-1) b/(nB)
}

TEST_CASE("collectives: hierarchical all-gather, NVLink inside the node then the NIC rails", "[collectives][oracle]") {
  // Two HGX nodes, 4 ranks each (gpus 0-3 and 8-11): a ring inside each node (3 steps of one block over NVLink,
  // 450 GB/s, 2 us), then, between the two nodes, one step carrying the node's 4 blocks over one NIC (rail-aligned:
  // 50 GB/s, the route latency read from the platform). Each rank receives 7 blocks.
  const double block = 8e6;
  const Scenario s = test::scenario_from(test::kSmallScenario, {"platform.nodes=2"});
  TaskGraph g(s.platform.gpu_count());
  const std::vector<int> gpus = {0, 1, 2, 3, 8, 9, 10, 11};
  hierarchical_allgather(g, gpus, 2, block, {Traffic::CP, "hier", -1}, RankTasks(8));
  const ExecutionResult result = execute(g, s.platform);
  std::vector<double> received(s.platform.gpu_count(), 0);
  double nic_latency = 0;
  for (std::size_t i = 0; i < g.task_count(); ++i) {
    received[g.task(static_cast<TaskId>(i)).peer] += g.task(static_cast<TaskId>(i)).bytes;
    if (g.task(static_cast<TaskId>(i)).gpu == 0 && g.task(static_cast<TaskId>(i)).peer == 8) nic_latency = result.routes[result.route_of_task[i]].latency_s;
  }
  CHECK(received[9] == 7 * block);
  CHECK(result.makespan_s ==
        Approx(3 * (kLatency_s + block / kBw_Bps) + nic_latency + 4 * block / s.platform.nic_bw_Bps).epsilon(1e-9));
}
