// Turns task records into the numbers users read: per-layer time breakdown, per-GPU busy time, bytes per traffic
// class, memory, and the simulated CP volumes next to the seeds' formulas. Definitions (docs/outputs.md):
//   - a GPU's layer window runs from the start of its first task in the layer to the end of its last;
//   - compute = time its compute stream is busy; exposed comm = time a flow it sends or receives is in flight while
//     its compute stream is idle; idle = the rest of the layer's span (waiting on other ranks: imbalance);
//   - a layer's compute_s / exposed_comm_s / idle_s are those of its critical GPU (the one finishing the layer last),
//     so compute_s + exposed_comm_s + idle_s = t_end_s - t_start_s.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/memory_timeline.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/memory.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

// What sharing GPUs and links with TP/EP traffic costs (sim/engine/contention.hpp): time with CP and TP/EP flows in flight
// together on a GPU, time flows waited after they were ready (exclusive mode), and compute time added by comm
// kernels holding SMs (subtractive mode).
struct ContentionMetrics {
  double cp_overlap_with_tp_ep_s = 0;
  double flow_wait_s = 0;         // summed over the flows a GPU sends
  double flow_slowdown_s = 0;     // transfer time beyond latency + bytes / bottleneck, over the flows a GPU sends
  double compute_slowdown_s = 0;  // summed over its compute kernels
};

struct LayerMetrics {
  LayerInfo info;
  double t_start_s = 0, t_end_s = 0;
  double compute_s = 0, exposed_comm_s = 0, idle_s = 0;
  // Mean over the layer's GPUs of their attention kernels' time (the CP lowering's kernels, those with an algorithm
  // step), over the largest: 1 = the causal split balances the work; 1/N = one GPU does it all.
  double attention_balance = 1;
  int critical_gpu = 0;
  // CP bytes the GPU receiving most takes in the layer's re-layout from the previous layer's token layout
  // (workloads/relayout.hpp); not counted in the kind's volume.
  double relayout_bytes = 0;
  double relayout_formula_bytes = 0;  // the same from the two layouts (relayout_max_received_bytes)
  ContentionMetrics contention;  // summed over the GPUs
};

struct RankMetrics {
  int gpu = 0, node = 0, local_gpu = 0, dp_rank = 0, cp_rank = 0, tp_rank = 0, pp_stage = 0;
  double compute_busy_s = 0;
  double exposed_comm_s = 0;
  ContentionMetrics contention;
  std::array<double, kTrafficClasses> bytes_sent{}, bytes_received{};
  MemoryBreakdown memory;       // the closed form (workloads/memory.hpp)
  double memory_peak_bytes = 0;  // the peak of its memory timeline, and when
  double memory_peak_t_s = 0;
};

struct VolumeRow {
  std::string layer_kind, cp_algorithm;
  double simulated_bytes = 0;  // max over ranks and layers of CP bytes received in one layer
  std::optional<double> formula_bytes;
  std::string formula;
  std::optional<bool> exact;  // layers that select (select-then-gather): whether the top-k is exact
};

// Time and bytes summed over the layers of one (kind, CP algorithm): where a mixed stack spends its time.
struct KindBreakdown {
  std::string layer_kind, cp_algorithm;
  int layers = 0;
  double time_s = 0, compute_s = 0, exposed_comm_s = 0, idle_s = 0;  // sums over its layers (critical GPU)
  double attention_balance = 1;            // the least balanced of its layers (LayerMetrics::attention_balance)
  double cp_bytes_per_rank_per_layer = 0;  // max over ranks and layers
  double cp_bytes_total = 0;               // all ranks, all its layers
};

// One pipeline stage (sim/report/pipeline_metrics.hpp).
struct StageMetrics {
  int stage = 0, first_gpu = 0, layers = 0, passes = 0;
  double busy_s = 0;    // time it runs some pass (union of its pass windows)
  double bubble_s = 0;  // makespan - busy_s: waiting on the other stages
  double memory_peak_bytes = 0;  // the highest peak of its GPUs
};

struct PipelineMetrics {
  int stages = 1, virtual_stages = 1, micro_batches = 1;
  std::string schedule;
  double ideal_bubble_fraction = 0;  // (pp - 1) / (v M + pp - 1)
  double bubble_fraction = 0;        // the largest stage bubble over the makespan
  std::vector<StageMetrics> stage_metrics;
};

struct Metrics {
  double makespan_s = 0;
  std::size_t tasks = 0, flows = 0;
  std::vector<LayerMetrics> layers;
  std::vector<RankMetrics> ranks;
  std::vector<VolumeRow> volumes;
  std::vector<KindBreakdown> by_kind;
  std::array<double, kTrafficClasses> total_bytes{};
  MemoryVerdict memory;   // the highest timeline peak of any GPU, against the GPU's HBM
  int memory_peak_gpu = 0;
  std::vector<MemoryTimeline> memory_timelines;  // per GPU (sim/engine/memory_timeline.hpp): the trace's memory tracks
  std::optional<PipelineMetrics> pipeline;        // parallel.pp > 1
};

Metrics compute_metrics(const Scenario& s, const TaskGraph& g, const ExecutionResult& r);

}  // namespace cpsim
