// Step costs persisted across runs (serve.cost_cache): a sweep over the arrival rate or the policy reuses the
// shapes its first point simulated. One JSON file per serving template, named by a hash of what a step's
// simulation depends on: the resolved scenario without its name and file (model, platform, GPU, plan, dtypes,
// contention), the model file's content and the cpsim binary itself; the serve block (rates, policies) is not part
// of it. Writes go to a temporary file renamed over the old one, merging what another process wrote meanwhile.
#pragma once
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/serve/step_costs.hpp"

namespace cpsim {

// The cache file for `serve` under `dir` ("" when dir is "").
std::string step_cost_cache_file(const Scenario& serve, const std::string& dir);
// Adds the cached costs to `table`; returns how many it read. A missing or unreadable file reads as empty.
int load_step_costs(const std::string& file, StepCostTable& table);
void save_step_costs(const std::string& file, const StepCostTable& table);
// serve.cost_cache: auto -> $CPSIM_CACHE_DIR, else $XDG_CACHE_HOME/cpsim/step-costs, else ~/.cache/cpsim/step-costs.
std::string default_step_cost_cache_dir();

}  // namespace cpsim
