// summary.json: the structured result of one simulation (schema in docs/outputs.md). Keys are written in a fixed
// order and every number is a pure function of the inputs, so the same scenario gives byte-identical files.
#pragma once
#include <nlohmann/json.hpp>

#include "sim/report/metrics.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/report/trace_writer.hpp"

namespace cpsim {

nlohmann::ordered_json resolved_scenario_json(const Scenario& s);
nlohmann::ordered_json summary_json(const Scenario& s, const Metrics& m, const TraceStats* trace);

}  // namespace cpsim
