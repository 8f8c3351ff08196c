// The cpsim subcommands. Each returns the process exit code: 0 ok, 2 bad input (message already printed).
#pragma once
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

}  // namespace cpsim
