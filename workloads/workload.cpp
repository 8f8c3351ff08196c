#include "workloads/workload.hpp"

#include <algorithm>
#include <spdlog/spdlog.h>

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
  const auto generate = [gpu_count](const WorkloadInputs& w) {
    return w.run.phase == Phase::DECODE ? generate_decode(w, gpu_count) : generate_layer_stack(w, gpu_count);
  };
  const auto report = [](TaskGraph& g) {
    g.seal();  // built: only the successor index is needed from here on
    if (g.repeated_tasks() > 0)
      spdlog::debug("repetition: {} of {} tasks copied from the layer before", g.repeated_tasks(), g.task_count());
  };
  if (!in.symmetry) {
    TaskGraph g = generate(in);
    report(g);
    return g;
  }
  try {
    TaskGraph g = generate(in);
    report(g);
    spdlog::info("symmetry: every TP rank mirrors TP rank 0 of its group: simulating 1 GPU in {}",
                 in.symmetry->orbit_size());
    return g;
  } catch (const SymmetryBroken& e) {
    spdlog::info("symmetry: not collapsed ({}); simulating every GPU", e.what());
    WorkloadInputs whole = in;
    whole.symmetry = nullptr;
    TaskGraph g = generate(whole);
    g.set_uncollapsed_reason(e.what());
    report(g);
    return g;
  }
}

}  // namespace cpsim
