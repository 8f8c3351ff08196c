// A sweep's results: one row per point. sweep.json is the record itself; sweep.csv is derived from it, so a merge of
// shards (which only reads sweep.json files) writes byte for byte what one unsharded run writes.
#pragma once
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "sim/sweep/sweep_spec.hpp"
#include "sim/sweep/worker_pool.hpp"

namespace cpsim {

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::string> values;  // one per axis
  std::string status;               // ok | invalid (bad input, exit 2) | failed (other exit code) | crashed (signal)
  std::string error;                // "" when ok: the worker's last stderr line
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();  // point_metrics(summary.json) when ok
};

struct SweepRecord {
  std::string scenario;                // the scenario file, as given
  std::string scenario_fnv1a64;        // its content hash: shards of two versions of it do not merge
  std::string cpsim_version = CPSIM_VERSION;
  std::vector<std::string> overrides;  // --set, as given
  std::vector<SweepAxis> axes;
  bool traces = false;
  std::optional<Shard> shard;          // set when this record holds one shard of N > 1
  std::vector<SweepPoint> points;      // ascending index
};

std::string point_dir(std::size_t index);

// A worker that did not succeed -> the row's status and error (the worker's last stderr line): exit code 2 is bad
// input ("invalid"), another code "failed", a signal "crashed". Returns false when the worker exited with 0.
bool record_failure(SweepPoint& p, const WorkerOutcome& w);  // "points/<index>", relative to the sweep folder

nlohmann::ordered_json sweep_json(const SweepRecord& r);
// `where` names the file in error messages (InputError).
SweepRecord sweep_from_json(const nlohmann::ordered_json& j, const std::string& where);

// One header line, then one line per point: index, the axes, status, error, the fixed metric columns, then the
// other metric columns (per layer kind) in name order. RFC 4180 quoting.
std::string sweep_csv(const SweepRecord& r);
std::string csv_field(const std::string& text);

// Joins shard records of one sweep into the record of the whole sweep. Every record must describe the same sweep
// (scenario, --set, axes, traces), and together they must hold every point exactly once.
SweepRecord merge_sweeps(const std::vector<SweepRecord>& parts, const std::vector<std::string>& names);

}  // namespace cpsim
