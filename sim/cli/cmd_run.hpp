// The cpsim subcommands. Each returns the process exit code: 0 ok, 2 bad input (message already printed).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace cpsim {

struct ScenarioArgs {
  std::string file;
  std::vector<std::string> overrides;  // --set key.path=value
};

int run_command(const ScenarioArgs& args, const std::string& output_dir);
int validate_command(const ScenarioArgs& args);
int platform_command(const ScenarioArgs& args, const std::string& xml_out);
// Prints, as JSON on stdout, the time to build the scenario's platform and SimGrid's raw rate for a bare ring
// exchange of `flows` flows of `bytes` on it (the benchmark's reference).
int engine_bench_command(const ScenarioArgs& args, std::size_t flows, double bytes);

}  // namespace cpsim
