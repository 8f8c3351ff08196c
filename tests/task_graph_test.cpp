// A task graph with a dependency cycle cannot run: the executor stops and names the tasks of the cycle (a generator
// bug must be reported with the tasks involved, never hang or pass silently).
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cpsim;

TEST_CASE("executor: a dependency cycle is reported with the tasks involved", "[executor][robustness]") {
  const Scenario s = test::scenario_from(test::kSmallScenario);
  TaskGraph g(s.platform.gpu_count());
  const TaskId a = g.add_flow(0, 1, 1e6, Traffic::CP, "send a", 0, 0);
  const TaskId b = g.add_flow(1, 0, 1e6, Traffic::CP, "send b", 0, 1);
  const TaskId free = g.add_compute(2, "independent", 0, 0, 1e-3, 0, 0);
  g.depend(a, b);
  g.depend(b, a);
  try {
    (void)execute(g, s.platform);
    FAIL("a cyclic graph ran to completion");
  } catch (const std::logic_error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("cycle") != std::string::npos);
    CHECK(message.find(describe_task(g, a)) != std::string::npos);
    CHECK(message.find(describe_task(g, b)) != std::string::npos);
    CHECK(message.find(describe_task(g, free)) == std::string::npos);  // the task that ran is not blamed
  }
}
