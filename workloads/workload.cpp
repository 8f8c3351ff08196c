#include "workloads/workload.hpp"

#include <algorithm>

#include "workloads/attention/partition.hpp"
#include "workloads/decode.hpp"
#include "workloads/layer_stack.hpp"

namespace cpsim {

ShardShape shard_shape(const WorkloadInputs& in) {
  ShardShape s;
  s.tokens = double(in.run.batch) * double(tokens_per_rank(in.run.seq_len, in.parallel.cp));
  s.q_heads = in.model.n_heads / in.parallel.tp;
  s.kv_heads = std::max(1, in.model.n_kv_heads / in.parallel.tp);
  s.head_dim = in.model.head_dim;
  s.dtype_bytes = dtype_bytes(in.run.dtypes.attention);
  s.kv_bytes = dtype_bytes(in.run.dtypes.kv_cache);
  s.activation_bytes = dtype_bytes(in.run.dtypes.activations);
  return s;
}

TaskGraph generate_workload(const WorkloadInputs& in, int gpu_count) {
  return in.run.phase == Phase::DECODE ? generate_decode(in, gpu_count) : generate_layer_stack(in, gpu_count);
}

}  // namespace cpsim
