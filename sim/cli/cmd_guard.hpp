// How a scenario command ends on an error: user-input errors become a one-line message and exit code 2, anything
// else that stops it (an output folder that cannot be written, a generator bug) a one-line message and exit code 1.
#pragma once
#include <fmt/format.h>
#include <iostream>
#include <stdexcept>

#include "sim/cli/cmd_run.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

// `failure_prefix` starts the exit-1 line ("cpsim: error: ", "cpsim plan: ").
template <class F>
int guarded(const ScenarioArgs& args, F&& body, const char* failure_prefix = "cpsim: error: ") {
  try {
    return body();
  } catch (const WorkloadTooLarge& e) {  // an input the machine cannot hold: refused like any input mistake
    std::cerr << fmt::format("{}:1:1: {}: {}", args.file, e.key, e.what()) << "\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << failure_prefix << e.what() << "\n";
    return 1;
  }
}

}  // namespace cpsim
