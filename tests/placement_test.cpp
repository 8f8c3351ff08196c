// parallel.order decides which GPUs form a CP or TP group; a group spanning nodes goes through the NICs.
// Oracle: the mapping formulas in workloads/rank_layout.hpp, and the platform's routes (NVLink inside a node, NIC
// rails across nodes).
#include <catch2/catch.hpp>

#include <set>

#include "support.hpp"
#include "workloads/rank_layout.hpp"

using namespace cpsim;

namespace {
std::set<int> nodes_of(const Scenario& s, const std::vector<int>& gpus) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(s.platform.gpus[g].node);
  return nodes;
}
const std::vector<std::string> kTwoNodes = {"platform.nodes=2", "parallel.cp=8", "parallel.tp=2", "model.layers=1"};
}  // namespace

TEST_CASE("placement: TP innermost strides CP across nodes, CP innermost keeps it in one", "[placement]") {
  const Scenario tp_inner = test::scenario_from(test::kSmallScenario, kTwoNodes);
  const RankLayout a(tp_inner.parallel);
  CHECK(a.cp_group(0) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});  // gpu = cp * tp + tp_rank
  CHECK(nodes_of(tp_inner, a.cp_group(0)).size() == 2);
  CHECK(nodes_of(tp_inner, a.tp_group(3)).size() == 1);

  auto overrides = kTwoNodes;
  overrides.push_back("parallel.order=[cp, tp, pp, dp]");
  const Scenario cp_inner = test::scenario_from(test::kSmallScenario, overrides);
  const RankLayout b(cp_inner.parallel);
  CHECK(b.cp_group(1) == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});  // gpu = tp * cp + cp_rank
  CHECK(nodes_of(cp_inner, b.cp_group(1)).size() == 1);
  CHECK(b.tp_group(0) == std::vector<int>{0, 8});
  CHECK(b.coord(9).cp == 1);
  CHECK(b.coord(9).tp == 1);
}

TEST_CASE("placement: a CP ring spanning nodes sends over the NICs", "[placement]") {
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario, kTwoNodes));
  bool nic = false;
  for (std::size_t i = 0; i < r.graph.task_count(); ++i) {
    const Task& t = r.graph.task(static_cast<TaskId>(i));
    if (t.kind != TaskKind::FLOW || t.traffic != Traffic::CP) continue;
    if (r.scenario.platform.gpus[t.gpu].node == r.scenario.platform.gpus[t.peer].node) continue;
    for (auto link : r.result.routes[r.result.route_of_task[i]].links)
      nic |= r.result.link_names[link].find("nic") != std::string::npos;
  }
  CHECK(nic);
}

TEST_CASE("placement: bad orders are located errors", "[placement][errors]") {
  auto o = kTwoNodes;
  o.push_back("parallel.order=[tp, dp, cp, pp]");
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, o),
                    Catch::Contains("parallel.order: cp and tp must be the two innermost degrees"));
  auto d = kTwoNodes;
  d.push_back("parallel.dp=2");
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, d),
                    Catch::Contains("parallel.dp: dp x pp x cp x tp = 32 GPUs, but the platform has 16"));
}
