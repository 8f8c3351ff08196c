// What one GPU must hold during a prefill (docs/model.md, "Memory"):
//   weights     = sum over layers of layer_weight_bytes + 2 * vocab * d_model / tp * s (MoE layers: shared experts
//                 split over tp, routed experts over ep, or over tp when ep = 1)
//   kv_cache    = sum over layers of the layer kind's cache (memory.cpp): tokens * 2 * d_kv_gpu * s for dense layers
//   activations = tokens * s * (2*d_model + q_w + 2*d_kv_gpu          (residual + normed input, Q/K/V)
//                               + 2 * 2*d_kv_gpu                      (two ring receive buffers: double buffering)
//                               + q_w + 2*ffn/tp)                     (attention output, FFN gate+up)
// with tokens = B*S/cp, q_w = n_heads/tp * d_head, d_kv_gpu = max(1, n_kv/tp) * d_head: the live buffers of one layer.
// Training keeps every layer's activations and adds gradients (= weights) and Adam states (12 bytes per parameter,
// not sharded: no distributed optimizer).
#pragma once
#include "workloads/prefill.hpp"

namespace cpsim {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double kv_cache_bytes = 0;
  double activations_bytes = 0;
  double gradients_bytes = 0;         // training: one gradient per weight, in the run's dtype
  double optimizer_states_bytes = 0;  // training: Adam's fp32 master weights, m and v: 12 bytes per parameter
  double total_bytes() const {
    return weights_bytes + kv_cache_bytes + activations_bytes + gradients_bytes + optimizer_states_bytes;
  }
};

// One layer's weights on one GPU: what every CP rank also holds (attention, dense FFN or shared experts, and the
// routed experts unless they are spread over CP too), and the routed experts' part of it.
struct LayerWeightBytes {
  double total = 0;
  double routed_experts = 0;
};
LayerWeightBytes layer_weight_bytes(const WorkloadInputs& in, int layer);

MemoryBreakdown prefill_memory(const WorkloadInputs& in);

}  // namespace cpsim
