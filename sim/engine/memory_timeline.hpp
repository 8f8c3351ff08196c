// Each GPU's memory over simulated time (the peak, not a sum of maxima): weights, gradients and optimizer states
// from the start (and a decode's context KV), then per layer as the GPU runs it (workloads/memory.hpp,
// layer_memory): a prefill layer adds its KV cache, which stays, and its working set, freed when the layer's last
// task on the GPU ends; a training forward layer frees its working set but keeps what run.recompute keeps, and
// its backward layer turns that back into a working set and frees it. Interleaved micro-batches hold their
// layers at once, which the closed form does not count.
#pragma once
#include <utility>
#include <vector>

#include "workloads/memory.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

struct MemoryTimeline {
  std::vector<std::pair<double, double>> points;  // (t_s, bytes) after each change, in time order; starts at t = 0
  double peak_bytes = 0, peak_t_s = 0;
};

// When a GPU runs a layer of the graph: its first task's start and its last task's end (last < 0: not at all).
struct LayerWindow {
  double first = 1e300, last = -1;
};

// windows[layer][gpu]; `base[gpu]` is the GPU's closed-form breakdown (its weights, gradients, optimizer states
// and, for decode, KV cache are held throughout; a pipeline stage's differ).
std::vector<MemoryTimeline> memory_timelines(const WorkloadInputs& in, const TaskGraph& g,
                                             const std::vector<MemoryBreakdown>& base,
                                             const std::vector<std::vector<LayerWindow>>& windows);

}  // namespace cpsim
