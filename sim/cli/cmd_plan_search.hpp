// `cpsim plan SCENARIO --search`: which plan should I run? Every candidate of sim/plan/plan_space.hpp is loaded (the
// loader refuses impossible ones with its reason), judged by the closed-form memory model (plans that do not fit
// are listed, not simulated, unless none fits), and the rest are simulated in parallel worker processes. The
// ranked table goes to stdout; DIR/plans.csv holds every candidate, DIR/winner.yaml is the best plan as a runnable
// scenario, DIR/points/<i>/summary.json each simulated plan's summary (i: the row of plans.csv's generation order).
#pragma once
#include <string>

#include "sim/cli/cmd_run.hpp"

namespace cpsim {

struct PlanSearchArgs {
  ScenarioArgs scenario;
  std::string output_dir;             // default out/<name>-plan
  int jobs = 0;                       // worker processes (0: one per hardware thread)
  std::string objective = "latency";  // latency (makespan) | throughput (tokens per second per GPU)
  int budget_gpus = 0;                // at most this many GPUs per plan (0: the platform's)
  int top = 10;                       // rows printed
};

int plan_search_command(const PlanSearchArgs& args);

}  // namespace cpsim
