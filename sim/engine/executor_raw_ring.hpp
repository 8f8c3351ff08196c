// SimGrid's own flow rate on a platform, as the limit cpsim's executor can approach: a bare ring exchange (every
// GPU sends a fixed payload to its right neighbour, round after round, no compute, no task graph), run in the same
// DAG mode and network model as the executor. Also times the platform construction alone.
#pragma once
#include <cstddef>

#include "platforms/platform_spec.hpp"

namespace cpsim {

struct EngineBenchResult {
  int gpus = 0;
  double platform_build_s = 0;  // host wall time to build the SimGrid platform
  std::size_t ring_flows = 0;
  double ring_wall_s = 0;       // host wall time of the ring exchange, platform excluded
  double ring_simulated_s = 0;  // simulated duration (oracle: rounds * (latency + bytes / bandwidth))
};

// `flows` is rounded up to whole rounds of gpus flows; `bytes` per flow.
EngineBenchResult run_engine_bench(const PlatformSpec& platform, std::size_t flows, double bytes);

}  // namespace cpsim
