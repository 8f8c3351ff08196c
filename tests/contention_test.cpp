// The four contention modes on two GPUs of one HGX node: one CP transfer of a = 100 MB and one TP transfer of
// b = 300 MB from GPU 0 to GPU 1, both ready at t = 0, sharing GPU 0's NVLink port up and GPU 1's port down
// (B = 450 GB/s per direction, route latency 2 us). Oracles derived by hand beside each assertion.
#include <catch2/catch.hpp>

#include "sim/engine/contention_policy.hpp"
#include "support.hpp"

using namespace cpsim;

namespace {

constexpr double a = 100e6, b = 300e6, B = 450e9, lat = 2e-6;

const char* kTwoGpus = test::kTwoGpuScenario;

struct Pair {
  double t_cp, t_tp, makespan;
};

Pair run_pair(const std::string& mode, std::vector<std::string> extra = {}) {
  extra.push_back("contention.mode=" + mode);
  const Scenario s = test::scenario_from(kTwoGpus, extra);
  TaskGraph g(s.platform.gpu_count());
  const TaskId cp = g.add_flow(0, 1, a, Traffic::CP, "cp", -1, 0);
  const TaskId tp = g.add_flow(0, 1, b, Traffic::TP, "tp", -1, 0);
  const ExecutionResult r = execute(g, s.platform, s.contention);
  return {r.finish_s[cp], r.finish_s[tp], r.makespan_s};
}

}  // namespace

TEST_CASE("contention: exclusive serializes the classes, T = T_CP + T_TP", "[contention]") {
  const Pair p = run_pair("exclusive");
  CHECK(p.t_cp == Approx(lat + a / B).epsilon(1e-9));                    // CP first (ready first, lower id)
  CHECK(p.makespan == Approx((lat + a / B) + (lat + b / B)).epsilon(1e-9));  // TP waits for it
}

TEST_CASE("contention: staggered runs each class as if alone, T = max(T_CP, T_TP)", "[contention]") {
  const Pair p = run_pair("staggered");
  CHECK(p.t_cp == Approx(lat + a / B).epsilon(1e-9));
  CHECK(p.makespan == Approx(std::max(lat + a / B, lat + b / B)).epsilon(1e-9));
}

TEST_CASE("contention: fair is max-min sharing", "[contention]") {
  // Both get B/2 until CP has sent a (at lat + 2a/B); TP then has b - a left at B: lat + (a + b)/B.
  const Pair p = run_pair("fair");
  CHECK(p.t_cp == Approx(lat + 2 * a / B).epsilon(1e-9));
  CHECK(p.makespan == Approx(lat + (a + b) / B).epsilon(1e-9));
}

TEST_CASE("contention: subtractive takes V(NC, C) per kernel from the link", "[contention]") {
  // NC = 8, C = 1 MiB, v = 2 GB/s, c0 = 64 KiB: V = 8 * 2e9 * (1 + 1/16) = 17 GB/s per kernel; b_channel 25 GB/s.
  // Two kernels: L2 = min(B - 2V, 2 * 8 * 25e9) = min(416e9, 400e9) = 400 GB/s, 200 GB/s each until CP is done;
  // then TP alone: L1 = min(B - V, 8 * 25e9) = 200 GB/s for its remaining b - a.
  const Pair p = run_pair("subtractive", {"contention.channels=8", "contention.interference_bw=2GBps"});
  const double V = 8 * 2e9 * (1 + 1.0 / 16), L2 = std::min(B - 2 * V, 2 * 8 * 25e9), L1 = std::min(B - V, 8 * 25e9);
  CHECK(L2 == 400e9);
  CHECK(p.t_cp == Approx(lat + a / (L2 / 2)).epsilon(1e-9));
  CHECK(p.makespan == Approx(lat + a / (L2 / 2) + (b - a) / L1).epsilon(1e-9));
}

TEST_CASE("contention: subtractive slows compute by the SMs comm kernels hold", "[contention]") {
  // A 1 ms kernel on GPU 0 starting while one flow (NC = 16) touches it runs on 132 - 16 SMs: 1 ms * 132 / 116.
  const Scenario s = test::scenario_from(kTwoGpus, {"contention.mode=subtractive"});
  TaskGraph g(s.platform.gpu_count());
  g.add_flow(0, 1, 4.5e9, Traffic::CP, "cp", -1, 0);  // long enough to cover the kernel
  const TaskId k = g.add_compute(0, "kernel", -1, 0, 1e-3, 1, 1);
  const ExecutionResult r = execute(g, s.platform, s.contention);
  CHECK(r.finish_s[k] - r.start_s[k] == Approx(1e-3 * 132 / 116).epsilon(1e-9));
}

TEST_CASE("contention: exclusive serves a GPU first come, first served", "[contention]") {
  // A chain of three TP transfers of b and a CP transfer of a that becomes ready (after a 0.1 ms kernel) while the
  // first TP transfer is in flight. The CP transfer queues, then goes before the second TP transfer, which became
  // ready later: CP ends at (lat + b/B) + (lat + a/B), the chain at 3 (lat + b/B) + (lat + a/B).
  const Scenario s = test::scenario_from(kTwoGpus, {"contention.mode=exclusive"});
  TaskGraph g(s.platform.gpu_count());
  const TaskId k = g.add_compute(0, "kernel", -1, 0, 1e-4, 1, 1);
  const TaskId cp = g.add_flow(0, 1, a, Traffic::CP, "cp", -1, 0);
  g.depend(cp, k);
  TaskId prev = g.add_flow(0, 1, b, Traffic::TP, "tp", -1, 0);
  for (int i = 1; i < 3; ++i) {
    const TaskId next = g.add_flow(0, 1, b, Traffic::TP, "tp", -1, i);
    g.depend(next, prev);
    prev = next;
  }
  const ExecutionResult r = execute(g, s.platform, s.contention);
  CHECK(lat + b / B > 1e-4);  // the CP transfer is ready while the first TP transfer is in flight
  CHECK(r.finish_s[cp] == Approx((lat + b / B) + (lat + a / B)).epsilon(1e-9));
  CHECK(r.start_s[cp] - r.ready_s(cp) == Approx(lat + b / B - 1e-4).epsilon(1e-9));  // the wait reported
  CHECK(r.makespan_s == Approx(3 * (lat + b / B) + (lat + a / B)).epsilon(1e-9));
}

TEST_CASE("contention: the policies' answers, without an engine", "[contention][policy]") {
  // One CP and one TP flow on a link / GPU pair; oracles from the mode definitions (sim/engine/contention.hpp).
  ClassCounts cp_and_tp{}, tp_only{}, none{};
  cp_and_tp[int(Traffic::CP)] = 1, cp_and_tp[int(Traffic::TP)] = 1;
  tp_only[int(Traffic::TP)] = 1;
  ContentionSpec spec;
  spec.mode = ContentionMode::FAIR;
  CHECK(make_contention_policy(spec, 132)->admits(Traffic::CP, tp_only, none));
  CHECK_FALSE(make_contention_policy(spec, 132)->shapes_links());
  spec.mode = ContentionMode::EXCLUSIVE;
  const auto exclusive = make_contention_policy(spec, 132);
  CHECK_FALSE(exclusive->admits(Traffic::CP, tp_only, none));  // TP in flight
  CHECK_FALSE(exclusive->admits(Traffic::CP, none, tp_only));  // TP queued first
  CHECK(exclusive->admits(Traffic::TP, tp_only, none));        // same class
  spec.mode = ContentionMode::STAGGERED;
  CHECK(make_contention_policy(spec, 132)->link_capacity_Bps(B, cp_and_tp) == 2 * B);  // two classes, 2x
  spec.mode = ContentionMode::SUBTRACTIVE;
  const auto subtractive = make_contention_policy(spec, 132);
  CHECK(subtractive->link_capacity_Bps(B, cp_and_tp) == spec.subtractive_link_Bps(B, 2));
  CHECK(subtractive->compute_stretch(2) == Approx(132.0 / (132 - 2 * 16)).epsilon(1e-15));  // NC = 16 each
  CHECK(subtractive->compute_stretch(0) == 1.0);
}

TEST_CASE("contention: subtractive re-times a running kernel when comm kernels start", "[contention]") {
  // A 1 ms kernel on GPU 0 starts alone at t = 0. A flow GPU 1 -> GPU 0 starts at 0.5 ms (after a 0.5 ms kernel on
  // GPU 1) and outlasts it: the first half runs at full rate, the other 0.5 ms of roofline work on 132 - 16 SMs:
  // finish = 0.5 ms + 0.5 ms * 132 / 116.
  const Scenario s = test::scenario_from(kTwoGpus, {"contention.mode=subtractive"});
  TaskGraph g(s.platform.gpu_count());
  const TaskId k = g.add_compute(0, "kernel", -1, 0, 1e-3, 1, 1);
  const TaskId before = g.add_compute(1, "before", -1, 0, 0.5e-3, 1, 1);
  const TaskId f = g.add_flow(1, 0, 4.5e9, Traffic::CP, "cp", -1, 0);
  g.depend(f, before);
  const ExecutionResult r = execute(g, s.platform, s.contention);
  CHECK(r.start_s[f] == Approx(0.5e-3).epsilon(1e-12));
  CHECK(r.finish_s[k] == Approx(0.5e-3 + 0.5e-3 * 132 / 116).epsilon(1e-9));
}

TEST_CASE("contention: staggered gives each class its own network, exactly as if alone", "[contention]") {
  // Two CP transfers of a and one TP transfer of b, all GPU 0 -> GPU 1 at t = 0. Alone, the two CP transfers share
  // the port: both end at lat + 2a/B; the TP transfer has a port of its own: lat + b/B. (Sharing k x B among all
  // three flows would give each 2B/3 instead.)
  const Scenario s = test::scenario_from(kTwoGpus, {"contention.mode=staggered"});
  TaskGraph g(s.platform.gpu_count());
  const TaskId cp1 = g.add_flow(0, 1, a, Traffic::CP, "cp", -1, 0);
  const TaskId cp2 = g.add_flow(0, 1, a, Traffic::CP, "cp", -1, 0);
  const TaskId tp = g.add_flow(0, 1, b, Traffic::TP, "tp", -1, 0);
  const ExecutionResult r = execute(g, s.platform, s.contention);
  CHECK(r.finish_s[cp1] == Approx(lat + 2 * a / B).epsilon(1e-9));
  CHECK(r.finish_s[cp2] == Approx(lat + 2 * a / B).epsilon(1e-9));
  CHECK(r.finish_s[tp] == Approx(lat + b / B).epsilon(1e-9));
  CHECK(r.link_names.front().rfind("cp/", 0) == 0);  // the CP copy's links
}
