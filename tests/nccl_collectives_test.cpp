// Collectives as NCCL runs them (workloads/nccl_collectives.hpp) on HGX H100 nodes with the nccl-h100-ib
// calibration (platforms/calibration.yaml). Every oracle is derived by hand from that table:
//   NVLink port 450 GB/s x 0.82 = 369 GB/s per direction, wire latency 2 us GPU to GPU inside a node;
//   NIC 50 GB/s x 0.94 = 47 GB/s, wire latency 5 us on a rail, 7 us off-rail (PXN: NVLink hop + NIC);
//   ring latency base [LL, LL128, Simple] = [6.6, 14, 8.4] us, per NVLink step [0.6, 1.9, 3.4], per net step
//   [2.7, 4.0, 14]; tree base [6.8, 14, 8.4], NVLink step [0.6, 1.25, 4.0], net step [5.0, 8.5, 14];
//   NVLS Simple 25 us per step, bandwidth 450 GB/s x 0.61; protocol bandwidth factors [0.5, 0.92, 1];
//   point-to-point message 7.2 us (NVLink) / 9.3 us (net) before the wire.
// An uncontended collective takes latency + wire latency + (hop bytes per channel) / bottleneck rate.
#include <catch2/catch.hpp>

#include <map>
#include <numeric>

#include "sim/engine/executor.hpp"
#include "support.hpp"
#include "workloads/nccl_collectives.hpp"

using namespace cpsim;

namespace {

constexpr double us = 1e-6, NVL = 450e9 * 0.82, NIC = 50e9 * 0.94;
constexpr double X = 256e6;  // bytes per rank: large enough that the bandwidth term dominates

std::string cluster(int nodes, int gpus_per_node, const std::string& collectives = "") {
  return "name: nccl\nplatform: {preset: hgx-h100, nodes: " + std::to_string(nodes) +
         ", gpus_per_node: " + std::to_string(gpus_per_node) +
         "}\nmodel: models/llama3-8b.yaml\nrun: {phase: prefill, seq_len: 32K}\nparallel: {cp: 1, tp: 1}\n" +
         collectives;
}

std::vector<int> first_gpus(int n) {
  std::vector<int> g(n);
  std::iota(g.begin(), g.end(), 0);
  return g;
}

struct Timed {
  CollectiveChoice choice;
  double makespan_s = 0;
  std::map<int, double> bytes_sent;  // per GPU
};

// Runs one collective of `bytes` over `gpus` on the scenario's machine, alone on the platform (`simulate`: false
// only lowers it; SimGrid allows one engine per process, so at most one simulated call per TEST_CASE).
Timed run_collective(const Scenario& s, CollectiveOp op, const std::vector<int>& gpus, double bytes,
                     bool simulate = true) {
  CollectiveMachine m(s.platform, s.parallel.collectives);
  TaskGraph g(s.platform.gpu_count(), &m);
  Timed t;
  t.choice = m.choose(op, gpus, bytes, Traffic::TP);
  m.run(op, g, gpus, bytes, CollectiveTag{Traffic::TP, "coll", -1}, RankTasks(gpus.size()));
  for (const Task& task : g.all_tasks())
    if (task.kind == TaskKind::FLOW) t.bytes_sent[task.gpu] += task.bytes;
  if (simulate) t.makespan_s = execute(g, s.platform).makespan_s;
  return t;
}

Scenario forced(int nodes, const std::string& algorithm, const std::string& protocol, int channels = 0) {
  std::string c = "collectives: {tp: {algorithm: " + algorithm + ", protocol: " + protocol;
  if (channels > 0) c += ", channels: " + std::to_string(channels);
  return test::scenario_from(cluster(nodes, 8, c + "}}\n"));
}

}  // namespace

TEST_CASE("nccl: one-node ring all-reduce, Simple: latency of 2(n-1) NVLink steps + 2(n-1)/n X / port rate",
          "[nccl][oracle]") {
  const Timed t = run_collective(forced(1, "ring", "Simple"), CollectiveOp::ALLREDUCE, first_gpus(8), X);
  CHECK(t.choice.channels == 1);  // one node: every channel shares the same ports, one flow per hop
  // 8.4 + 14 x 3.4 = 56 us; wire 2 us; each hop carries 2 x 7/8 X at 369 GB/s.
  CHECK(t.makespan_s == Approx(56 * us + 2 * us + 2 * 7.0 / 8 * X / NVL).epsilon(1e-9));
}

TEST_CASE("nccl: one-node ring all-gather: n-1 steps forwarding every block", "[nccl][oracle]") {
  // All-gather of X per rank: 8.4 + 7 x 3.4 = 32.2 us; each hop forwards the 7 other blocks: 7 X.
  CHECK(run_collective(forced(1, "ring", "Simple"), CollectiveOp::ALLGATHER, first_gpus(8), X).makespan_s ==
        Approx(32.2 * us + 2 * us + 7 * X / NVL).epsilon(1e-9));
}

TEST_CASE("nccl: one-node ring reduce-scatter: n-1 steps of 1/n of the buffer", "[nccl][oracle]") {
  // Reduce-scatter of an X buffer: 8.4 + 7 x 3.4 = 32.2 us; each hop carries 7/8 X.
  CHECK(run_collective(forced(1, "ring", "Simple"), CollectiveOp::REDUCE_SCATTER, first_gpus(8), X).makespan_s ==
        Approx(32.2 * us + 2 * us + 7.0 / 8 * X / NVL).epsilon(1e-9));
}

TEST_CASE("nccl: LL128 ring all-reduce: its latency row and 0.92 of the port", "[nccl][oracle]") {
  const Timed t = run_collective(forced(1, "ring", "LL128"), CollectiveOp::ALLREDUCE, first_gpus(8), X);
  // 14 + 14 x 1.9 = 40.6 us; the protocol's bandwidth loss is paid as time: hop / (369 GB/s x 0.92).
  CHECK(t.makespan_s == Approx(40.6 * us + 2 * us + 2 * 7.0 / 8 * X / (NVL * 0.92)).epsilon(1e-9));
}

TEST_CASE("nccl: LL ring all-reduce: half the port", "[nccl][oracle]") {
  const Timed t = run_collective(forced(1, "ring", "LL"), CollectiveOp::ALLREDUCE, first_gpus(8), X);
  // 6.6 + 14 x 0.6 = 15 us; LL moves 8 bytes of line per 4 of data: hop / (369 GB/s x 0.5).
  CHECK(t.makespan_s == Approx(15 * us + 2 * us + 2 * 7.0 / 8 * X / (NVL * 0.5)).epsilon(1e-9));
}

TEST_CASE("nccl: NVLS all-reduce: one switch step, the buffer once through each port at 0.61 of line rate",
          "[nccl][oracle]") {
  const Timed t = run_collective(forced(1, "nvls", "Simple"), CollectiveOp::ALLREDUCE, first_gpus(8), X);
  CHECK(t.choice.algorithm == CollectiveAlgorithm::NVLS);
  // 25 us; wire 2 us; X / (450 GB/s x 0.61). (1e-7: the loss is paid as time, X/369 GB/s x (0.82/0.61 - 1).)
  CHECK(t.makespan_s == Approx(25 * us + 2 * us + X / (450e9 * 0.61)).epsilon(1e-7));
}

TEST_CASE("nccl: two ranks on one rail across nodes: two net steps and the NIC", "[nccl][oracle]") {
  const Timed t = run_collective(forced(2, "ring", "Simple"), CollectiveOp::ALLREDUCE, {0, 8}, X);
  CHECK(t.choice.channels == 1);  // one rank per node: one rail
  // 8.4 + 2 x 14 = 36.4 us; rail wire 5 us; each hop carries 2 x 1/2 X at 47 GB/s.
  CHECK(t.makespan_s == Approx(36.4 * us + 5 * us + X / NIC).epsilon(1e-9));
}

TEST_CASE("nccl: 2 x 8 ring all-reduce on 2 channels: each channel crosses nodes on its own NIC", "[nccl][oracle]") {
  const Timed t = run_collective(forced(2, "ring", "Simple", 2), CollectiveOp::ALLREDUCE, first_gpus(16), X);
  CHECK(t.choice.channels == 2);
  // Latency 8.4 + (30 - 2) x 3.4 + 2 x 14 = 131.6 us. Each channel's two node-crossing hops are off-rail (PXN,
  // 7 us wire) and each has a NIC to itself, carrying half of the hop's 2 x 15/16 X: the NIC paces the ring.
  const double hop = 2 * 15.0 / 16 * X;
  CHECK(t.makespan_s == Approx(131.6 * us + 7 * us + hop / 2 / NIC).epsilon(1e-9));
}

TEST_CASE("nccl: 2 x 8 ring all-reduce on its default 8 channels uses all 8 NICs of each node", "[nccl][oracle]") {
  const Timed t = run_collective(forced(2, "ring", "Simple"), CollectiveOp::ALLREDUCE, first_gpus(16), X);
  CHECK(t.choice.channels == 8);  // one per rail: min(16 channels, 8 ranks per node)
  // Each NIC carries hop / 8 (hop / 376 GB/s), each NVLink port 8 x hop / 8 (hop / 369 GB/s, links shared
  // evenly: every flow of a port gets the same weight whatever its route's latency): NVLink paces it. The 8 flows of
  // a port start with 2 us (NVLink) or 7 us (PXN) of wire latency, so the ring ends between the two bounds.
  const double hop = 2 * 15.0 / 16 * X;
  CHECK(t.makespan_s >= 131.6 * us + 2 * us + hop / NVL);
  CHECK(t.makespan_s <= 131.6 * us + 7 * us + hop / NVL);
  CHECK(t.makespan_s < 131.6 * us + 7 * us + hop / 2 / NIC);  // 4x faster than over 2 NICs (test above)
}

TEST_CASE("nccl: 2 x 8 tree all-reduce: chains in the nodes, two binary trees over the node heads",
          "[nccl][oracle]") {
  const Timed t = run_collective(forced(2, "tree", "Simple"), CollectiveOp::ALLREDUCE, first_gpus(16), X);
  CHECK(t.choice.algorithm == CollectiveAlgorithm::TREE);
  CHECK(t.choice.channels == 8);
  // Latency 8.4 + 2 x (7 x 4.0 + log2(2) x 14) = 92.4 us. Each of 8 channels moves X/8 up and down a chain of 8
  // (rotated per channel): a GPU's port carries 2 flows per channel where it is inside the chain, 1 at either end,
  // 6 x 2 + 1 + 1 = 14 flows of X/8 = 1.75 X at 369 GB/s; the heads' NIC flows (X/8 per NIC) finish earlier.
  CHECK(t.makespan_s == Approx(92.4 * us + 2 * us + 1.75 * X / NVL).epsilon(1e-9));
}

TEST_CASE("nccl: 2 x 8 hierarchical all-gather: NVLink ring in the node, then rails across nodes", "[nccl][oracle]") {
  const Timed t =
      run_collective(forced(2, "hierarchical", "Simple"), CollectiveOp::ALLGATHER, first_gpus(16), X);
  // Intra-node ring of 8: 32.2 us + 2 us + 7 X / 369 GB/s; then per rail a 2-rank ring of the node's 8 X:
  // 8.4 + 14 = 22.4 us + 5 us + 8 X / 47 GB/s.
  CHECK(t.makespan_s ==
        Approx((32.2 * us + 2 * us + 7 * X / NVL) + (22.4 * us + 5 * us + 8 * X / NIC)).epsilon(1e-9));
}

TEST_CASE("nccl: 2 x 8 hierarchical all-reduce: reduce-scatter, per-rail all-reduce, all-gather", "[nccl][oracle]") {
  const Timed t =
      run_collective(forced(2, "hierarchical", "Simple"), CollectiveOp::ALLREDUCE, first_gpus(16), X);
  // Reduce-scatter in the node: 32.2 us + 2 us + 7/8 X / 369 GB/s; all-reduce of X/8 per rail over 2 nodes:
  // 36.4 us + 5 us + X/8 / 47 GB/s; all-gather of X/8 in the node: 32.2 us + 2 us + 7 X/8 / 369 GB/s.
  const double intra = 32.2 * us + 2 * us + 7.0 / 8 * X / NVL;
  CHECK(t.makespan_s == Approx(intra + (36.4 * us + 5 * us + X / 8 / NIC) + intra).epsilon(1e-9));
}

TEST_CASE("nccl: auto picks by NCCL's cost model", "[nccl][oracle]") {
  const Scenario one = test::scenario_from(cluster(1, 8)), two = test::scenario_from(cluster(2, 8));
  const CollectiveMachine m1(one.platform), m2(two.platform);
  // One node, 4 KB: LL ring (15 us + tiny) beats NVLS (25 us) and Simple (56 us).
  auto c = m1.choose(CollectiveOp::ALLREDUCE, first_gpus(8), 4096, Traffic::TP);
  CHECK((c.algorithm == CollectiveAlgorithm::RING && c.protocol == Protocol::LL));
  // One node, 1 GB: NVLS (X / 274.5 GB/s) beats the Simple ring (2 x 7/8 X / 369 GB/s = X / 211 GB/s).
  c = m1.choose(CollectiveOp::ALLREDUCE, first_gpus(8), 1e9, Traffic::TP);
  CHECK(c.algorithm == CollectiveAlgorithm::NVLS);
  // Two nodes, 4 KB: LL tree (6.8 + 2 x (7 x 0.6 + 5.0) = 25.2 us) beats the LL ring (6.6 + 28 x 0.6 + 2 x 2.7
  // = 28.8 us).
  c = m2.choose(CollectiveOp::ALLREDUCE, first_gpus(16), 4096, Traffic::TP);
  CHECK((c.algorithm == CollectiveAlgorithm::TREE && c.protocol == Protocol::LL));
  // Its bus bandwidth is min(369 GB/s NVLink, 8 x 47 GB/s NICs) = 369 GB/s, times LL's 0.5 and the tree's 0.46.
  CHECK(c.predicted_s == Approx(25.2 * us + 4096 / (NVL * 0.5 * 0.92 * 0.5)).epsilon(1e-9));
  // Two nodes, 1 GB: the Simple ring (busbw 8 NICs x 47 GB/s capped by NVLink's 369) beats the tree's 0.46 of it.
  c = m2.choose(CollectiveOp::ALLREDUCE, first_gpus(16), 1e9, Traffic::TP);
  CHECK((c.algorithm == CollectiveAlgorithm::RING && c.protocol == Protocol::SIMPLE));
  // All-gather has no tree or NVLS: ring.
  c = m2.choose(CollectiveOp::ALLGATHER, first_gpus(16), 1e8, Traffic::TP);
  CHECK(c.algorithm == CollectiveAlgorithm::RING);
}

TEST_CASE("nccl: point-to-point messages and all-to-all pay the calibrated call latency", "[nccl][oracle]") {
  const Scenario s = test::scenario_from(cluster(2, 8));
  CollectiveMachine m(s.platform);
  TaskGraph g(s.platform.gpu_count(), &m);
  const TaskId nvlink = g.add_flow(0, 1, X, Traffic::CP, "p2p", -1, 0);  // inside node 0
  const TaskId net = g.add_flow(9, 1, X, Traffic::CP, "p2p", -1, 0);     // node 1 -> node 0, rail 1
  const RankTasks done = alltoall(g, {4, 5, 6, 7}, X, CollectiveTag{Traffic::CP, "a2a", -1}, RankTasks(4));
  const ExecutionResult r = execute(g, s.platform);
  // 7.2 us + 2 us + X / 369 GB/s (the net flow enters GPU 1 through its NIC, not its NVLink port).
  CHECK(r.finish_s[nvlink] == Approx(7.2 * us + 2 * us + X / NVL).epsilon(1e-9));
  // 9.3 us + 5 us + X / 47 GB/s.
  CHECK(r.finish_s[net] == Approx(9.3 * us + 5 * us + X / NIC).epsilon(1e-9));
  // All-to-all of 4 GPUs (4..7, disjoint from the flows above): every message at once, 3 per port:
  // 7.2 us + 2 us + 3 X / 369 GB/s.
  double a2a_end_s = 0;
  for (const auto& rank : done)
    for (TaskId id : rank) a2a_end_s = std::max(a2a_end_s, r.finish_s[id]);
  CHECK(a2a_end_s == Approx(7.2 * us + 2 * us + 3 * X / NVL).epsilon(1e-9));
}

TEST_CASE("nccl: per-rank bytes are the lock-step rings' on every algorithm of a ring", "[nccl][oracle]") {
  // Oracle: the ideal machine's ring_allreduce / ring_allgather / ring_reduce_scatter (workloads/collectives.hpp,
  // asserted against their closed forms in tests/collectives_test.cpp) send the same bytes per rank.
  const Scenario s = forced(2, "ring", "auto");
  const auto gpus = first_gpus(16);
  for (const CollectiveOp op : {CollectiveOp::ALLREDUCE, CollectiveOp::ALLGATHER, CollectiveOp::REDUCE_SCATTER}) {
    INFO(collective_op_name(op));
    const Timed t = run_collective(s, op, gpus, X, /*simulate=*/false);
    TaskGraph ideal(s.platform.gpu_count());
    const CollectiveTag tag{Traffic::TP, "coll", -1};
    if (op == CollectiveOp::ALLREDUCE) ring_allreduce(ideal, gpus, X, tag, RankTasks(16));
    if (op == CollectiveOp::ALLGATHER) ring_allgather(ideal, gpus, X, tag, RankTasks(16));
    if (op == CollectiveOp::REDUCE_SCATTER) ring_reduce_scatter(ideal, gpus, X, tag, RankTasks(16));
    std::map<int, double> expected;
    for (const Task& task : ideal.all_tasks())
      if (task.kind == TaskKind::FLOW) expected[task.gpu] += task.bytes;
    for (int gpu : gpus) CHECK(t.bytes_sent.at(gpu) == Approx(expected.at(gpu)).epsilon(1e-12));
  }
}
