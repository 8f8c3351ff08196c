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
// engine.json: how the engine ran it (docs/outputs.md): collapsed onto one GPU per symmetry orbit or not, and why;
// what it simulated. Separate from summary.json, which is the same whichever way the engine went.
// `no_symmetry`: why no symmetry was tried ("" when one was).
nlohmann::ordered_json engine_json(const TaskGraph& g, const std::string& no_symmetry);

}  // namespace cpsim
