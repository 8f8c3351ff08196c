#include "workloads/attention/dense/ring_attention.hpp"

#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks ring_attention(TaskGraph& g, const std::vector<int>& ring, const RingAttentionSpec& spec,
                         const RankTasks& entry) {
  const int n = static_cast<int>(ring.size());
  RankTasks done = entry;  // per rank: what ends its previous step
  for (int k = 0; k < n; ++k) {
    RankTasks next(n);
    if (k + 1 < n) {
      for (int i = 0; i < n; ++i) {
        const int right = (i + 1) % n;
        const TaskId f = g.add_flow(ring[i], ring[right], spec.kv_block_bytes, Traffic::CP, "ring kv", spec.layer, k);
        g.depend_all(f, done[i]);
        g.depend_all(f, done[right]);
        next[i].push_back(f);
        next[right].push_back(f);
      }
    }
    for (int i = 0; i < n; ++i) {
      const KernelCost c = spec.block_cost(i, (i - k + n) % n);
      if (c.flops <= 0) continue;
      const TaskId a = g.add_compute(ring[i], "attention", spec.layer, k, c.duration_s, c.flops, c.hbm_bytes);
      g.depend_all(a, done[i]);
      next[i].push_back(a);
    }
    for (int i = 0; i < n; ++i)
      if (next[i].empty()) next[i] = done[i];
    done = std::move(next);
  }
  return done;
}

}  // namespace cpsim

namespace cpsim {

RankTasks lower_dense_ring(LayerContext& ctx, const RankTasks& entry) {
  RankTasks out(entry.size());
  // A rank's block: the K and V of its new tokens and of its share of the persistent cache (run.cached_tokens).
  const double block_tokens = ctx.shape.tokens + ctx.in.run.batch * double(ctx.in.run.cached_tokens) / ctx.in.parallel.cp;
  // Shaped kernels: every step after the first merges its partial output into the rank's fp32 accumulator with
  // the log-sum-exp correction, a memory-bound pass (read fp32 + read block output + write fp32 per element), as
  // ring-flash-attention and TransformerEngine do between kernel calls. The ideal machine fuses it away.
  const ShardShape& sh = ctx.shape;
  const double merge_bytes = sh.tokens * sh.q_width() * (4 + sh.dtype_bytes + 4);
  const RingAttentionSpec spec{ctx.layer, block_tokens * kv_token_bytes(ctx), [&ctx, merge_bytes](int q, int kv) {
                                 KernelCost c = dense_attention_block(ctx, q, kv);
                                 if (ctx.in.gpu.kernels.shaped && q != kv && c.flops > 0) {
                                   c.duration_s += memory_time_s(ctx.in.gpu, merge_bytes);
                                   c.hbm_bytes += merge_bytes;
                                 }
                                 return c;
                               }};
  for (int tp = 0; tp < ctx.in.parallel.tp; ++tp) {
    const auto ring = ctx.layout.cp_group(tp);
    RankTasks ring_entry;
    for (int gpu : ring) ring_entry.push_back(entry[gpu]);
    const RankTasks done = ring_attention(ctx.graph, ring, spec, ring_entry);
    for (std::size_t i = 0; i < ring.size(); ++i) out[ring[i]] = done[i];
  }
  return out;
}

}  // namespace cpsim
