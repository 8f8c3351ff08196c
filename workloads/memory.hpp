// What one GPU must hold during a prefill (docs/model.md, "Memory"):
//   weights     = (layers * layer_params + 2 * vocab * d_model) / tp * s
//   kv_cache    = sum over layers of the layer kind's cache (memory.cpp): tokens * 2 * d_kv_gpu * s for dense layers
//   activations = tokens * s * (2*d_model + q_w + 2*d_kv_gpu          (residual + normed input, Q/K/V)
//                               + 2 * 2*d_kv_gpu                      (two ring receive buffers: double buffering)
//                               + q_w + 2*ffn/tp)                     (attention output, FFN gate+up)
// with tokens = B*S/cp, q_w = n_heads/tp * d_head, d_kv_gpu = max(1, n_kv/tp) * d_head: the live buffers of one layer.
#pragma once
#include "workloads/prefill.hpp"

namespace cpsim {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double kv_cache_bytes = 0;
  double activations_bytes = 0;
  double total_bytes() const { return weights_bytes + kv_cache_bytes + activations_bytes; }
};

MemoryBreakdown prefill_memory(const WorkloadInputs& in);

}  // namespace cpsim
