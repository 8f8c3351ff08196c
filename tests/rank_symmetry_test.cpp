// The fast path's symmetry (workloads/rank_symmetry.hpp): which plans and platforms admit the TP rotation, and the
// task graph's own check while it is built collapsed (workloads/task_graph.cpp). The end-to-end oracle (summaries
// byte-identical to the full simulation over a matrix of kinds, phases and modes) is tests/cli/fast_path_identical.sh.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/rank_symmetry.hpp"

using namespace cpsim;

TEST_CASE("rank symmetry: orbits, rotations and folded ports of the TP rotation") {
  const RankSymmetry sym(4, 16);  // tp = 4: GPU = cp_rank * 4 + tp_rank
  // Oracle: the layout gpu = cp * tp + t, rotated within each group of 4.
  CHECK(sym.representative(6) == 4);
  CHECK(sym.shift(6) == 2);
  CHECK(sym.rotate(5, -1) == 4);
  CHECK(sym.rotate(4, -1) == 7);
  CHECK(sym.rotate(7, 1) == 4);
  CHECK(sym.rotate(13, 3) == 12);
  // Ports: link 2g is GPU g's NVLink port, 2g + 1 its NIC (platforms/topology.hpp); GPU 6's NIC folds onto GPU 4's.
  CHECK(sym.representative_link(13) == 9);
  CHECK(sym.representative_link(12) == 8);
}

TEST_CASE("rank symmetry: admitted on a preset cluster with TP inside nodes, refused otherwise") {
  std::string why;
  const Scenario s = test::scenario_from(test::kSmallScenario, {"parallel.cp=2", "parallel.tp=4"});
  CHECK(tp_rotation_symmetry(s.parallel, s.platform, &why).has_value());
  const Scenario no_tp = test::scenario_from(test::kSmallScenario);
  CHECK_FALSE(tp_rotation_symmetry(no_tp.parallel, no_tp.platform, &why));
  CHECK(why.find("tp = 1") != std::string::npos);
  const Scenario cp_inner = test::scenario_from(test::kSmallScenario, {"parallel.cp=2", "parallel.tp=4",
                                                                       "parallel.order=[cp, tp, pp, dp]"});
  CHECK_FALSE(tp_rotation_symmetry(cp_inner.parallel, cp_inner.platform, &why));
}

TEST_CASE("rank symmetry: one slower port (platform.link_bw) breaks the symmetry") {
  std::string why;
  // The same plan as the admitted one above, with GPU 3's NIC at a quarter of the others'.
  const Scenario s =
      test::scenario_from(test::kSmallScenario, {"parallel.cp=2", "parallel.tp=4", "platform.link_bw.n0_nic3=12.5GBps"});
  CHECK_FALSE(tp_rotation_symmetry(s.parallel, s.platform, &why));
  CHECK(why == "link n0_nic3 differs from n0_nic0");
}

namespace {
// Two TP groups of two GPUs (0,1) and (2,3): each GPU computes, sends to its TP peer, and computes again after
// the peer's flow arrives; `skew` makes GPU 3's second kernel longer.
TaskGraph two_groups(double skew_s) {
  TaskGraph g(4);
  g.collapse_by(RankSymmetry(2, 4));
  std::vector<TaskId> first, flows;
  for (int gpu = 0; gpu < 4; ++gpu) first.push_back(g.add_compute(gpu, "qkv", -1, -1, 1e-3, 1, 1));
  for (int gpu = 0; gpu < 4; ++gpu) {
    flows.push_back(g.add_flow(gpu, gpu ^ 1, 1e6, Traffic::TP, "tp", -1, 0));
    g.depend(flows.back(), first[gpu]);
  }
  for (int gpu = 0; gpu < 4; ++gpu) {
    const TaskId second = g.add_compute(gpu, "o", -1, -1, 2e-3 + (gpu == 3 ? skew_s : 0), 1, 1);
    g.depend(second, flows[gpu ^ 1]);  // waits for what its peer sent
  }
  return g;
}
}  // namespace

TEST_CASE("rank symmetry: the graph keeps one GPU per orbit and checks the others mirror it") {
  TaskGraph g = two_groups(0);
  std::string why;
  REQUIRE(g.finish_collapse(&why));
  // Oracle: GPUs 0 and 2 are kept, 3 tasks each (qkv, tp, o); each task stands for 2.
  REQUIRE(g.task_count() == 6);
  CHECK(g.copies_per_task() == 2);
  for (const Task& t : g.all_tasks()) CHECK((t.gpu == 0 || t.gpu == 2));
  // GPU 0's "o" waited for GPU 1's flow: folded onto GPU 0's own flow (GPU 1's mirror image), plus its stream.
  const TaskId tp0 = 2, o0 = 4;  // kept in order: qkv0, qkv2, tp0, tp2, o0, o2
  CHECK(g.task(static_cast<TaskId>(o0)).gpu == 0);
  std::vector<TaskId> waited_by_o0;
  for (TaskId id = 0; id < g.task_count(); ++id)
    for (TaskId s : g.successors(id))
      if (s == o0) waited_by_o0.push_back(id);
  CHECK(waited_by_o0 == std::vector<TaskId>{0, tp0});  // qkv0 (FIFO stream) and tp0
}

TEST_CASE("rank symmetry: a GPU that does not mirror its representative is refused") {
  TaskGraph g = two_groups(1e-6);  // GPU 3's kernel 1 us longer than GPU 2's
  std::string why;
  CHECK_FALSE(g.finish_collapse(&why));
  CHECK(why.find("GPU 3's tasks are not GPU 2's rotated") == 0);
}
