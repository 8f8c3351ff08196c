// `cpsim plan SCENARIO`: prints how parallel ranks land on GPUs (parallel.order) and which links each CP and TP group
// uses, without simulating.
#pragma once
#include "sim/cli/cmd_run.hpp"

namespace cpsim {

int plan_command(const ScenarioArgs& args);

}  // namespace cpsim
