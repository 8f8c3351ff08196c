// The lines a person reads after `cpsim run`: the phase's own figure (TTFT for a prefill, time per output token
// for decode, step time for training), where the critical GPU's time goes, its memory against HBM, the CP volumes
// next to the seeds' formulas, and contention when there is any. Logged, never parsed: tools read summary.json.
#pragma once
#include <string>
#include <vector>

#include "sim/report/metrics.hpp"
#include "sim/scenario/scenario.hpp"

namespace cpsim {

std::vector<std::string> headline_lines(const Scenario& s, const Metrics& m);

// The GPU the headline's time split describes: the one whose compute and exposed communication add up to the most
// of the makespan (the least idle; the lowest index on ties).
int busiest_gpu(const Metrics& m);

}  // namespace cpsim
