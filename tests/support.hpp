// Helpers shared by the tests: build a scenario from YAML text, and run it through the whole pipeline.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "sim/engine/executor.hpp"
#include "sim/report/metrics.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/decode.hpp"

namespace cpsim::test {

// Writes `yaml` to a fresh temporary file (scenario-relative paths resolve against the source tree).
inline std::string write_temp(const std::string& yaml, const std::string& name = "scenario.yaml") {
  const auto dir = std::filesystem::temp_directory_path() / ("cpsim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << yaml;
  return path;
}

inline Scenario scenario_from(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario(write_temp(yaml), overrides);
}

struct Run {
  Scenario scenario;
  TaskGraph graph;
  ExecutionResult result;
  Metrics metrics;
};

inline WorkloadInputs inputs_of(const Scenario& s) {
  return WorkloadInputs{s.model, s.run, s.parallel, s.cp, s.platform.gpu, &s.platform};
}

// One full simulation. SimGrid allows one engine per process: call at most once per TEST_CASE.
inline Run simulate(const Scenario& s) {
  Run r{s, generate_workload(inputs_of(s), s.platform.gpu_count()), {}, {}};
  r.result = execute(r.graph, r.scenario.platform, r.scenario.contention);
  r.metrics = compute_metrics(r.scenario, r.graph, r.result);
  return r;
}

// A small dense model and one-node platform; tests override what they study with --set style overrides.
inline const char* kSmallScenario = R"(
name: test
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8, calibration: ideal}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 32K, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
cp: {dense: {algorithm: ring, partition: zigzag}}
)";

// Two GPUs of one HGX H100 node on the ideal machine (450 GB/s per direction, 2 us): the contention tests' platform.
inline const char* kTwoGpuScenario = R"(
name: two-gpus
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 2, calibration: ideal}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 32K}
parallel: {cp: 2, tp: 1}
)";

}  // namespace cpsim::test
