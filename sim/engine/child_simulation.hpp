// Simulating many scenarios from one process: SimGrid allows one engine per process, so each scenario runs in a
// forked child that sends its makespan back through a pipe, at most `parallel` children at a time. A child that
// cannot simulate sends its error's message, and the parent raises it as the same kind of error (an input mistake
// stays an InputError, a graph over run.max_tasks a WorkloadTooLarge). The parent never starts an engine itself.
#pragma once
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace cpsim {

// Makespans of `scenarios` (as run builds them: generate_workload, then execute), in order. `what` names the
// batch in an error ("the auto candidates", "step costs").
std::vector<double> simulate_makespans_in_children(const std::vector<Scenario>& scenarios, int parallel,
                                                   const char* what);

}  // namespace cpsim
