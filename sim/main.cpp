// cpsim: simulate context-parallel attention on a GPU cluster.
//   cpsim run SCENARIO [-o DIR] [--set key.path=value]...   simulate; write summary.json and trace.json
//   cpsim validate SCENARIO [--set ...]                     check a scenario without running it
//   cpsim platform SCENARIO --emit-xml OUT.xml              write the scenario's platform as SimGrid XML
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "sim/cmd_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cpsim: a discrete-event simulator for context-parallel LLM attention"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();

  cpsim::ScenarioArgs scenario;
  std::string output_dir, xml_out;
  auto add_scenario = [&](CLI::App* cmd) {
    cmd->add_option("scenario", scenario.file, "scenario YAML file")->required();
    cmd->add_option("--set", scenario.overrides, "override a key: --set parallel.cp=4 (repeatable)");
  };
  CLI::App* run = app.add_subcommand("run", "simulate a scenario");
  add_scenario(run);
  run->add_option("-o,--output", output_dir, "output folder (default: out/<scenario name>)");
  CLI::App* validate = app.add_subcommand("validate", "check a scenario without running it");
  add_scenario(validate);
  CLI::App* platform = app.add_subcommand("platform", "write the scenario's platform as SimGrid XML");
  add_scenario(platform);
  platform->add_option("--emit-xml", xml_out, "output XML file")->required();

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("[%l] %v");

  if (*run) return cpsim::run_command(scenario, output_dir);
  if (*validate) return cpsim::validate_command(scenario);
  return cpsim::platform_command(scenario, xml_out);
}
