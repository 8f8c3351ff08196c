// The plan space of `cpsim plan --search` (sim/plan/plan_space.cpp). Oracles: the candidates enumerated by hand.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/plan/plan_space.hpp"
#include "support.hpp"

using namespace cpsim;

namespace {
std::vector<std::string> labels(const std::vector<PlanCandidate>& plans) {
  std::vector<std::string> out;
  for (const auto& p : plans) out.push_back(p.label);
  return out;
}
}  // namespace

TEST_CASE("plan space: degrees within the budget and every dense algorithm", "[plan]") {
  // Budget 2 on an 8-GPU node: tp 1 with cp 1 (pp 1 or 2: 32 layers split in two) or cp 2, tp 2 with cp 1; no dp
  // (one micro-batch per step). At cp 2, ring, allgather and ulysses (USP needs a Ulysses degree strictly between 1
  // and cp; pass-Q needs a persistent cache).
  const Scenario s = test::scenario_from(test::kSmallScenario);
  CHECK(labels(plan_candidates(s, 2)) == std::vector<std::string>{"cp=1 tp=1", "cp=1 tp=1 pp=2", "cp=2 tp=1 dense=ring",
                                                                  "cp=2 tp=1 dense=allgather",
                                                                  "cp=2 tp=1 dense=ulysses", "cp=1 tp=2"});
  // With 1M cached tokens pass-Q joins the dense choices.
  const Scenario cached = test::scenario_from(test::kSmallScenario, {"run.cached_tokens=1M"});
  const auto with_cache = labels(plan_candidates(cached, 2));
  CHECK(std::count(with_cache.begin(), with_cache.end(), "cp=2 tp=1 dense=pass-q") == 1);
}

TEST_CASE("plan space: dp replicas split the step's micro-batches, pp divides the layers", "[plan]") {
  // Four micro-batches on a budget of 4 GPUs at cp 1, tp 1: pp and dp in {1, 2, 4} with pp x dp <= 4, each dp
  // running 4 / dp of the micro-batches (the same work per step for every plan); dp inside pp when both are > 1.
  const Scenario s = test::scenario_from(test::kSmallScenario, {"run.micro_batches=4"});
  std::vector<std::string> at_cp1;
  const auto plans = plan_candidates(s, 4);
  for (const auto& p : plans)
    if (p.label.rfind("cp=1 tp=1", 0) == 0) at_cp1.push_back(p.label);
  CHECK(at_cp1 == std::vector<std::string>{"cp=1 tp=1", "cp=1 tp=1 dp=2", "cp=1 tp=1 dp=4", "cp=1 tp=1 pp=2",
                                          "cp=1 tp=1 pp=2 dp=2", "cp=1 tp=1 pp=4"});
  const auto both = std::find_if(plans.begin(), plans.end(), [](const PlanCandidate& p) { return p.label == "cp=1 tp=1 pp=2 dp=2"; });
  REQUIRE(both != plans.end());
  CHECK(std::count(both->sets.begin(), both->sets.end(), "run.micro_batches=2") == 1);
  CHECK(std::count(both->sets.begin(), both->sets.end(), "parallel.order=[tp,cp,dp,pp]") == 1);
  // Three micro-batches: dp 2 would not split them evenly, so only dp 1.
  for (const auto& p : plan_candidates(test::scenario_from(test::kSmallScenario, {"run.micro_batches=3"}), 4))
    CHECK(p.label.find("dp=") == std::string::npos);
}

TEST_CASE("plan space: USP at the node's Ulysses degree across nodes", "[plan]") {
  // 2 nodes of 8: at tp 1, cp 16, USP groups the 8 GPUs of a node (ulysses_degree = 8).
  const Scenario two_nodes = test::scenario_from(test::kSmallScenario, {"platform.nodes=2"});
  const auto plans = plan_candidates(two_nodes, 0);
  const auto it = std::find_if(plans.begin(), plans.end(),
                               [](const PlanCandidate& p) { return p.label == "cp=16 tp=1 dense=usp(8)"; });
  REQUIRE(it != plans.end());
  CHECK(std::count(it->sets.begin(), it->sets.end(), "cp.dense.ulysses_degree=8") == 1);
}

TEST_CASE("plan space: a MoE model spreads experts over 1, tp or tp x cp GPUs", "[plan]") {
  // DeepSeek-V3.2 (MoE, DSA layers): at tp 2, cp 2 the expert degrees are 1, 2 and 4, each with the three DSA
  // choices (AllGather, select-then-gather approximate and exact).
  const Scenario s = test::scenario_from(std::string(test::kSmallScenario), {"model=models/deepseek-v3.2.yaml"});
  std::vector<std::string> at_2x2;
  for (const auto& p : plan_candidates(s, 4))
    if (p.label.rfind("cp=2 tp=2 ", 0) == 0) at_2x2.push_back(p.label);
  std::vector<std::string> expected;
  for (const char* ep : {"ep=1", "ep=2", "ep=4"})
    for (const char* dsa : {"dsa=allgather", "dsa=select-gather(approx)", "dsa=select-gather(exact)"})
      expected.push_back(fmt::format("cp=2 tp=2 {} {}", ep, dsa));
  CHECK(at_2x2 == expected);
}

TEST_CASE("plan space: the second stage changes one choice of a plan at a time", "[plan]") {
  // A ring plan at cp 4 x tp 2 (TP traffic meets CP traffic): the two other partitions, CP innermost, the three
  // other contention modes; for throughput also two micro-batches.
  const Scenario s = test::scenario_from(test::kSmallScenario, {"parallel.tp=2"});
  const PlanCandidate plan{{"parallel.cp=4", "parallel.tp=2"}, "cp=4 tp=2 dense=ring", {}};
  const std::vector<std::string> expected{"cp=4 tp=2 dense=ring contiguous", "cp=4 tp=2 dense=ring striped",
                                          "cp=4 tp=2 dense=ring order=cp-inner", "cp=4 tp=2 dense=ring exclusive",
                                          "cp=4 tp=2 dense=ring staggered", "cp=4 tp=2 dense=ring subtractive"};
  CHECK(labels(plan_refinements(s, plan, false)) == expected);
  const auto for_throughput = labels(plan_refinements(s, plan, true));
  CHECK(for_throughput.back() == "cp=4 tp=2 dense=ring mb=2");
  CHECK(plan_refinements(s, plan, true).back().sets.back() == "run.micro_batches=2");
  // A refinement's choice replaces the plan's own for the key and is not changed again further down the path.
  const PlanCandidate striped = plan_refinements(s, plan, false)[1];
  CHECK(striped.changed_keys == std::vector<std::string>{"cp.dense.partition"});
  const Scenario striped_s = test::scenario_from(test::kSmallScenario, {"parallel.tp=2", "cp.dense.partition=striped"});
  const auto again = labels(plan_refinements(striped_s, striped, false));
  CHECK(again.front() == "cp=4 tp=2 dense=ring striped order=cp-inner");  // no partition variant any more
  // A pipeline with micro-batches: its two other schedules.
  const Scenario piped = test::scenario_from(test::kSmallScenario, {"parallel.cp=1", "parallel.pp=2", "run.micro_batches=4"});
  const PlanCandidate pp_plan{{"parallel.pp=2"}, "cp=1 tp=1 pp=2", {}};
  CHECK(labels(plan_refinements(piped, pp_plan, false)) ==
        std::vector<std::string>{"cp=1 tp=1 pp=2 interleaved", "cp=1 tp=1 pp=2 gpipe"});
  // No CP: nothing to refine.
  CHECK(plan_refinements(test::scenario_from(test::kSmallScenario, {"parallel.cp=1"}), plan, false).empty());
}
