// The outputs of a serving run (docs/serving.md, "Outputs"): requests.csv (one row per request), step_costs.csv
// (every grid shape the run used and its simulated time), the `serve` section of summary.json (TTFT / TPOT / end-to-
// end percentiles, throughput, goodput under the SLO, utilisation, queue length over time) and the trace (one track
// per instance, one slice per iteration, a counter of waiting requests).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/scenario/scenario.hpp"
#include "sim/serve/serve_simulation.hpp"

namespace cpsim {

struct ServeInputs {
  const Scenario& scenario;
  const std::vector<ServeInstance>& instances;
  const std::vector<Request>& requests;
  const std::vector<RequestPlan>& plans;
  const StepCostTable& costs;
  const ServeRun& run;
};

// Nearest-rank percentile of `values` (sorted in place): the smallest value with at least p% of them at or below.
double percentile(std::vector<double>& values, double p);

void write_requests_csv(std::ostream& out, const ServeInputs& in);
void write_step_costs_csv(std::ostream& out, const StepCostTable& costs);
nlohmann::ordered_json serve_summary_json(const ServeInputs& in);
// The resolved serve block, for the summary's `scenario`.
nlohmann::ordered_json serve_spec_json(const ServeSpec& spec);
void write_serve_trace(std::ostream& out, const ServeInputs& in);
// The lines `cpsim run` prints for a serving run.
std::vector<std::string> serve_headline(const ServeInputs& in, const nlohmann::ordered_json& summary);

}  // namespace cpsim
