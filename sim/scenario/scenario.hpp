// A scenario: the validated, resolved description of one simulation. Loading checks everything a user can get
// wrong (keys, types, presets, degrees, divisibility, platform size) before anything runs; problems are thrown as
// InputError with `file:line:col: key.path: message`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "platforms/platform_spec.hpp"
#include "sim/engine/contention.hpp"
#include "sim/serve/serve_spec.hpp"
#include "workloads/model.hpp"

namespace cpsim {

struct Scenario {
  std::string name;
  std::string file;      // the scenario file it was read from
  std::string on_oom_location;  // "file:line:col: run.on_oom" for the error of a simulated peak that does not fit
  std::string model_file;  // "" when the model is inline
  std::string hf_config_file;  // the HuggingFace config.json behind `model: {hf_config: ...}`, "" without one
  PlatformSpec platform;
  ModelSpec model;
  RunSpec run;
  ParallelSpec parallel;
  CpPlan cp;
  bool write_trace = true;
  bool gzip_trace = false;  // outputs.trace: gzip -> trace.json.gz
  std::vector<int> trace_gpus, trace_layers;  // outputs.trace_gpus / trace_layers: what the trace shows (empty: all)
  ContentionSpec contention;
  // run.phase: serve: the request-level run (docs/serving.md). `run` then holds a prefill of the first grid length,
  // the template every step of an instance is simulated from (sim/serve/instance_model.hpp).
  std::optional<ServeSpec> serve;
};

class MapReader;
}  // namespace cpsim
namespace YAML {
class Node;
}  // namespace YAML
namespace cpsim {
// The scenario's `name`: it is the default output folder (out/NAME) and the trace's title, so a plain file name,
// never a path (an InputError at the key otherwise).
std::string read_scenario_name(MapReader& top);

// `overrides` are "key.path=value" strings from --set; values are parsed as YAML scalars or flow collections.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});

// The scenario file's document with `overrides` applied, its `sweep:` block dropped and the files it names (model,
// platform file and presets) as absolute paths: (file, overrides) as one self-contained scenario that runs the same
// from any folder. `cpsim plan --search` writes its winner with it.
YAML::Node scenario_document(const std::string& file, const std::vector<std::string>& overrides);

}  // namespace cpsim
