// Collectives lowered to point-to-point flows, so the network model sees every byte. Each takes, per rank of the
// group, the tasks that must finish before the rank enters the collective, and returns, per rank, the tasks after
// which that rank holds the result. A flow starts only when both of its ranks have entered the step (NCCL pairs
// sends with receives).
#pragma once
#include <string>
#include <vector>

#include "workloads/task_graph.hpp"

namespace cpsim {

using RankTasks = std::vector<std::vector<TaskId>>;  // indexed by position in the group

struct CollectiveTag {
  Traffic traffic = Traffic::NONE;
  std::string name;  // slice name in the trace, e.g. "tp allreduce"
  int layer = -1;
};

// Ring all-reduce of `bytes` per rank: 2(n-1) steps, each rank sending bytes/n to its right neighbour per step.
// Uncontended time: 2(n-1) * (latency + bytes / (n * bw)).
RankTasks ring_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready);

}  // namespace cpsim
