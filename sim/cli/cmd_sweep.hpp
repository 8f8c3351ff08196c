// cpsim sweep: run a scenario over the cartesian product of its `sweep:` block and --axis lists, one worker process
// per point; cpsim merge: join the outputs of sharded sweeps. See docs/sweeps.md.
#pragma once
#include <string>
#include <vector>

#include "sim/cli/cmd_run.hpp"

namespace cpsim {

struct SweepArgs {
  ScenarioArgs scenario;
  std::string output_dir;         // default out/<scenario name>
  int jobs = 0;                   // worker processes at a time; 0 = one per hardware thread
  std::vector<std::string> axes;  // --axis key=v1,v2,...
  std::vector<std::string> zips;  // --zip key=v1,v2,...: these move together
  std::string shard;              // --shard I/N
  bool traces = false;            // keep each point's trace.json
};

// Exit code: 0 every point ran, 1 some points failed (each is a row with its error), 2 bad input (nothing run).
int sweep_command(const SweepArgs& args);
// Exit code: 0 merged (whatever the points' status), 2 bad input (not one sweep, a point missing or twice).
int merge_command(const std::vector<std::string>& dirs, const std::string& output_dir);

}  // namespace cpsim
