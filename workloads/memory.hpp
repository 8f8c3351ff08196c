// What one GPU must hold during a prefill (docs/model.md, "Memory"):
//   weights     = sum over layers of layer_weight_bytes + 2 * vocab * d_model / tp * s (MoE layers: shared experts
//                 split over tp, routed experts over ep, or over tp when ep = 1)
//   kv_cache    = sum over layers of the layer kind's cache (memory.cpp): tokens * 2 * d_kv_gpu * s for dense layers
//   activations = tokens * s * (2*d_model + q_w + 2*d_kv_gpu          (residual + normed input, Q/K/V)
//                               + q_w + 2*ffn/tp)                     (attention output, FFN gate+up)
//   comm_buffers = the largest layer's CP receive buffers (layer_comm_buffer_bytes)
// with tokens = B*S/cp, q_w = n_heads/tp * d_head, d_kv_gpu = max(1, n_kv/tp) * d_head: the live buffers of one layer
// (sequence parallelism divides the residual and normed input, 2*d_model, by tp).
// Training keeps activations per run.recompute (workloads/model.hpp): none = every layer's activations; selective =
// per layer (2*d_model + 2*q_w + 2*d_kv_gpu), plus one layer's FFN intermediates; full = per layer its input d_model
// (/tp with SP), the running layer's replaced by its working set. It adds gradients (= weights) and Adam states (12
// bytes per parameter), divided over the dp x cp ranks by parallel.zero (1: states, 2: + gradients, 3: + weights,
// plus the largest layer gathered).
#pragma once
#include <string>

#include "workloads/workload.hpp"

namespace cpsim {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double kv_cache_bytes = 0;
  double kv_cache_seed_bytes = 0;     // the same cache in the seed's c_kv layout (2 * d_c per token with MLA); not summed
  double activations_bytes = 0;
  double comm_buffers_bytes = 0;      // CP receive buffers of the stage's largest layer (layer_comm_buffer_bytes)
  double gradients_bytes = 0;         // training: one gradient per weight, in the run's dtype
  double optimizer_states_bytes = 0;  // training: Adam's fp32 master weights, m and v: 12 bytes per parameter
  double framework_reserve_bytes = 0; // run.memory_reserve: the CUDA context and what the framework holds first
  double total_bytes() const {
    return weights_bytes + kv_cache_bytes + activations_bytes + comm_buffers_bytes + gradients_bytes +
           optimizer_states_bytes + framework_reserve_bytes;
  }
};

// One layer's weights on one GPU: what every CP rank also holds (attention, dense FFN or shared experts, and the
// routed experts unless they are spread over CP too), and the routed experts' part of it.
struct LayerWeightBytes {
  double total = 0;
  double routed_experts = 0;
};
LayerWeightBytes layer_weight_bytes(const WorkloadInputs& in, int layer);

// The GPU that needs the most: with pipeline stages, the stage whose breakdown totals highest.
MemoryBreakdown prefill_memory(const WorkloadInputs& in);
// A GPU of pipeline stage `stage` (parallel.pp): its layers only (workloads/pipeline_schedule.hpp), the input
// embedding on the first stage and the output one on the last, a pipeline's KV cache for every micro-batch, and in
// training the activations of the chunk passes it runs forward before their backward.
MemoryBreakdown stage_memory(const WorkloadInputs& in, int stage);

// The CP receive buffers one GPU holds while a layer of `kinds` runs (docs/model.md, "Communication buffers"), per
// kind under its algorithm: the mode's own rule (AttentionModeDef::staging), else for a chain of point-to-point hops
// (ring, pass-Q, LASP-1) two hops' bytes, 2 x received / (N-1) (double buffering), twice that in training (dK, dV
// travel beside K, V); for every other mode what arrives at once, its closed-form received bytes (the all-gathered
// KV or states, the all-to-all receive buffers, the gathered selections), in training the larger of forward and
// backward. 0 without CP.
double layer_comm_buffer_bytes(const WorkloadInputs& in, const LayerKinds& kinds);

// One layer's share, for the memory timeline (sim/engine/memory_timeline.cpp): the KV it caches (inference), its working
// set while it runs, and what a training forward keeps of it for the backward pass (run.recompute). The closed
// form above is built from the same pieces.
struct LayerMemory {
  double kv_bytes = 0, working_bytes = 0, kept_bytes = 0;
  double comm_bytes = 0;  // the part of working_bytes that is CP receive buffers (layer_comm_buffer_bytes)
};
LayerMemory layer_memory(const WorkloadInputs& in, const LayerKinds& kinds);

// Whether a GPU's memory fits its HBM: the total against the capacity, the overflow, and the largest term (what to
// shrink first: more CP for KV and activations, more TP/EP or FP8 for weights, ZeRO for optimizer states).
struct MemoryVerdict {
  double capacity_bytes = 0, need_bytes = 0;
  bool fits = true;
  double overflow_bytes = 0;            // need - capacity when it does not fit, else 0
  std::string largest_term;             // "weights", "kv_cache", "activations", "comm_buffers", "gradients", ...
  double largest_term_bytes = 0;
};
MemoryVerdict memory_verdict(const MemoryBreakdown& m, double capacity_bytes);
// The same against a need other than the breakdown's sum (the timeline's peak); the largest term stays the
// breakdown's.
MemoryVerdict memory_verdict(const MemoryBreakdown& m, double capacity_bytes, double need_bytes);
// "needs 700.00 GiB of 80.00 GiB HBM (over by 620.00 GiB; largest term: kv_cache 650.00 GiB)"
std::string describe_overflow(const MemoryVerdict& v);

}  // namespace cpsim
