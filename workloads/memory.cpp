#include "workloads/memory.hpp"

namespace cpsim {

MemoryBreakdown prefill_memory(const WorkloadInputs& in) {
  const ShardShape sh = shard_shape(in);
  const double s = sh.dtype_bytes, t = sh.tokens, d = in.model.d_model;
  const double ffn = double(in.model.ffn_dim) / in.parallel.tp;
  MemoryBreakdown m;
  m.weights_bytes = (in.model.layers * in.model.layer_params() + in.model.embedding_params()) / in.parallel.tp * s;
  m.kv_cache_bytes = in.model.layers * t * 2 * sh.kv_width() * s;
  m.activations_bytes =
      t * s * (2 * d + sh.q_width() + 2 * sh.kv_width() + 2 * 2 * sh.kv_width() + sh.q_width() + 2 * ffn);
  return m;
}

}  // namespace cpsim
