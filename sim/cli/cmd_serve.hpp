// `cpsim run` on a scenario with run.phase: serve (docs/serving.md): requests, policies, step costs simulated per
// shape (in child processes, memoised and cached), the request-level simulation, then requests.csv,
// step_costs.csv, summary.json and trace.json in the output folder.
#pragma once
#include <string>

#include "sim/scenario/scenario.hpp"

namespace cpsim {

int serve_run(const Scenario& scenario, const std::string& output_dir);

}  // namespace cpsim
