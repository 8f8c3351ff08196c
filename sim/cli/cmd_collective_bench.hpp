// `cpsim collective-bench SCENARIO`: nccl-tests on the simulated machine. A chain of `count` collectives of one
// kind and size over the scenario platform's first `gpus` GPUs, lowered as the workloads lower them (NCCL-style
// algorithms and channels on a calibrated platform, lock-step rings on the ideal one) and simulated with the
// scenario's contention mode. Prints JSON: time per collective, algorithm and bus bandwidth (nccl-tests'
// definitions), flows, wall time. The ASTRA-sim-shaped benchmark case (bench/allgather-256.yaml) runs it.
#pragma once
#include <string>

#include "sim/cli/cmd_run.hpp"

namespace cpsim {

struct CollectiveBenchArgs {
  ScenarioArgs scenario;
  std::string op = "allgather";  // allgather | allreduce | reduce_scatter | alltoall
  double bytes = double(1ull << 30);  // nccl-tests' size: the whole output (all-gather), buffer (all-reduce), ...
  int count = 100;
  int gpus = 0;  // 0 = every GPU of the platform
};

int collective_bench_command(const CollectiveBenchArgs& args);

}  // namespace cpsim
