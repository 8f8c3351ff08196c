// Pass-Q prefill with a persistent KV cache (cp-overview.md: Meta's pass-KV / pass-Q): every rank holds its share
// of the cached KV (cached/N tokens) and of the new tokens (T/N); instead of rotating KV, each rank's Q block
// travels the ring (N-1 hops) and every rank it visits attends it to its local KV (all of its cached tokens, the
// new ones causally), then returns the partial output (O and an fp32 log-sum-exp per head) to the Q's owner, which
// merges the N partials. Per rank received: (N-1) * T/N * B * (q_w*s) + (N-1) * T/N * B * (q_w*s + 4*h_q).
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks lower_dense_pass_q(LayerContext& ctx, const RankTasks& entry) {
  const ShardShape& sh = ctx.shape;
  const double q_bytes = sh.tokens * sh.q_width() * sh.dtype_bytes;
  const double partial_bytes = sh.tokens * (sh.q_width() * sh.dtype_bytes + 4.0 * sh.q_heads);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks done = in;                      // per rank: what ends its previous step
    std::vector<std::vector<TaskId>> returned(n);  // per owner: its partial outputs coming back
    for (int k = 0; k < n; ++k) {
      RankTasks next(n);
      for (int i = 0; i < n; ++i) {
        const int owner = (i - k + n) % n;  // whose Q rank i holds at step k
        std::vector<TaskId> after = done[i];
        if (k > 0) {  // the Q arrived from the left neighbour
          const int left = (i + n - 1) % n;
          const TaskId hop = ctx.graph.add_flow(gpus[left], gpus[i], q_bytes, Traffic::CP, "pass-q q", ctx.layer, k);
          ctx.graph.depend_all(hop, done[left]);
          ctx.graph.depend_all(hop, done[i]);
          after = {hop};
          next[left].push_back(hop);
        }
        const KernelCost c = dense_attention_block(ctx, owner, i);
        const TaskId part = add_kernel(ctx, gpus[i], "partial attention", k, c, after);
        next[i].push_back(part);
        if (owner != i) {
          const TaskId back = ctx.graph.add_flow(gpus[i], gpus[owner], partial_bytes, Traffic::CP, "pass-q partial out",
                                                 ctx.layer, k);
          ctx.graph.depend(back, part);
          returned[owner].push_back(back);
          next[i].push_back(back);
        }
      }
      done = std::move(next);
    }
    RankTasks out(n);
    for (int i = 0; i < n; ++i) {
      std::vector<TaskId> after = done[i];
      after.insert(after.end(), returned[i].begin(), returned[i].end());
      const double merge_bytes = n * partial_bytes;
      out[i] = {add_kernel(ctx, gpus[i], "merge partials", n, memory_pass_cost(ctx, merge_bytes), after)};
    }
    return out;
  });
}

}  // namespace cpsim
