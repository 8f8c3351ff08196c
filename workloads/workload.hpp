// What every workload generator reads (the model, the run, the parallel plan, the GPU and the platform), what one
// GPU holds of a layer, and the entry point that builds a scenario's task graph for its phase.
#pragma once
#include <stdexcept>

#include "platforms/platform_spec.hpp"
#include "workloads/model.hpp"
#include "workloads/rank_symmetry.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

struct WorkloadInputs {
  const ModelSpec& model;
  const RunSpec& run;
  const ParallelSpec& parallel;
  const CpPlan& cp;
  const GpuSpec& gpu;
  // The platform the collectives are lowered for (NCCL-style on a calibrated one); nullptr = the ideal machine.
  const PlatformSpec* platform = nullptr;
  // Build collapsed under this symmetry (workloads/rank_symmetry.hpp); nullptr = every GPU's tasks.
  const RankSymmetry* symmetry = nullptr;
};

// What one GPU holds of one layer: its tokens (all sequences of the batch) and its share of heads.
struct ShardShape {
  double tokens = 0;          // B * S / cp
  int q_heads = 0;            // n_heads / tp
  int kv_heads = 0;           // n_kv_heads / tp, at least 1 (KV heads are replicated when tp > n_kv_heads)
  int head_dim = 0;
  double dtype_bytes = 2;       // attention operands (Q, O): run.dtypes.attention
  double kv_bytes = 2;          // K, V in the cache and in CP transfers: run.dtypes.kv_cache
  double activation_bytes = 2;  // TP/EP payloads and activation buffers: run.dtypes.activations
  double q_width() const { return double(q_heads) * head_dim; }
  double kv_width() const { return double(kv_heads) * head_dim; }  // d_kv on this GPU
};
ShardShape shard_shape(const WorkloadInputs& in);

// Dispatches on run.phase: a prefill or a training step (layer_stack.hpp), or decode steps (decode.hpp). With
// in.symmetry, the graph is built collapsed; if some GPU turns out not to mirror its representative, it is built
// again whole (logged).
TaskGraph generate_workload(const WorkloadInputs& in, int gpu_count);

// A collapsed graph whose GPUs did not all mirror their representatives (finish_collapse).
struct SymmetryBroken : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace cpsim
