// Training's gradient all-reduce (DP traffic) over the GPUs holding the same weights, Megatron's DP x CP group: for
// each TP rank, its peers in every CP rank of every simulated DP replica. Routed experts spread over CP
// (ep = tp * cp) reduce over the DP replicas only. parallel.grad_sync `overlap`: one bucket per layer, launched when
// its backward is done (overlapping the rest of the backward); `end`: one all-reduce of every layer after it (per
// pipeline stage: a stage's all-reduce waits for its own last backward only).
// Bytes per GPU and layer: the layer's weights on that GPU (workloads/memory.hpp), in the run's dtype.
#pragma once
#include <cstddef>
#include <vector>

#include "workloads/nccl_collectives.hpp"
#include "workloads/workload.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {

struct LayerGradients {
  int layer = -1;     // the (last micro-batch's) backward layer entry
  int gpu_base = 0;   // the first GPU of the layer's pipeline stage in replica 0 (RankLayout::stage_base)
  RankTasks done;     // per replica-local GPU: the tasks after which the layer's gradients are complete
};

// `grads` is indexed by model layer; replica r's copy of task t is t + r * replica_tasks (TaskGraph::replicate).
void add_gradient_sync(TaskGraph& g, const WorkloadInputs& in, const RankLayout& layout,
                       const std::vector<LayerGradients>& grads, std::size_t replica_tasks);

}  // namespace cpsim
