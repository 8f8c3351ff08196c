// comparison.csv: one row per combination of the non-compared axes, each candidate's makespan or status, the
// fastest candidate and how far behind the runner-up is. Oracle: the hand-made record below.
#include <catch2/catch.hpp>

#include "sim/sweep/sweep_comparison.hpp"

using namespace cpsim;

namespace {
SweepPoint point(std::size_t i, std::vector<std::string> values, const char* status, double makespan) {
  SweepPoint p;
  p.index = i;
  p.values = std::move(values);
  p.status = status;
  if (p.status == "ok") p.metrics["makespan_s"] = makespan;
  return p;
}
}  // namespace

TEST_CASE("sweep comparison: the fastest candidate per point", "[sweep][comparison]") {
  SweepRecord r;
  r.axes = {{"parallel.cp", {"2", "4"}}, {"cp.dense.algorithm", {"ring", "ulysses", "usp"}}};
  r.points = {point(0, {"2", "ring"}, "ok", 2.0), point(1, {"2", "ulysses"}, "ok", 1.0),
              point(2, {"2", "usp"}, "ok", 1.5),  point(3, {"4", "ring"}, "ok", 0.5),
              point(4, {"4", "ulysses"}, "invalid", 0), point(5, {"4", "usp"}, "ok", 0.8)};
  const auto axis = comparison_axis(r);
  REQUIRE(axis == 1u);
  CHECK(comparison_csv(r, *axis) ==
        "parallel.cp,makespan_s.ring,makespan_s.ulysses,makespan_s.usp,fastest,fastest_makespan_s,runner_up_ratio\n"
        "2,2,1,1.5,ulysses,1,1.5\n"
        "4,0.5,invalid,0.8,ring,0.5,1.6\n");
  SweepRecord no_choice;
  no_choice.axes = {{"parallel.cp", {"2"}}};
  CHECK_FALSE(comparison_axis(no_choice));
}

TEST_CASE("sweep ranking: candidates fastest first, with what explains the gaps", "[sweep][comparison]") {
  SweepRecord r;
  r.axes = {{"contention.mode", {"fair", "exclusive", "staggered"}}};
  r.points = {point(0, {"fair"}, "ok", 1.5), point(1, {"exclusive"}, "ok", 2.0), point(2, {"staggered"}, "ok", 1.0)};
  r.points[1].metrics["contention.flow_wait_s"] = 0.5;
  r.points[0].metrics["contention.cp_overlap_with_tp_ep_s"] = 0.25;
  const auto axis = comparison_axis(r);
  REQUIRE(axis == 0u);
  // Ratios to the fastest (1.0): 1.5, 2; absent metrics are 0.
  CHECK(ranking_csv(r, *axis) ==
        "rank,contention.mode,makespan_s,vs_fastest,critical_exposed_comm_s,critical_idle_s,"
        "contention.cp_overlap_with_tp_ep_s,contention.flow_wait_s,contention.flow_slowdown_s,"
        "contention.compute_slowdown_s\n"
        "1,staggered,1,1,0,0,0,0,0,0\n"
        "2,fair,1.5,1.5,0,0,0.25,0,0,0\n"
        "3,exclusive,2,2,0,0,0,0.5,0,0\n");
}
