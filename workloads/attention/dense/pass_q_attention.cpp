// Pass-Q prefill with a persistent KV cache (cp-overview.md: Meta's pass-KV / pass-Q, arXiv:2411.01783): every
// rank holds its share of the cached KV (cached/N tokens) and of the new tokens (T/N). Instead of rotating KV,
// each rank's Q block travels the ring (N-1 hops) and every rank it visits attends it to its local KV (all of its
// cached tokens, the new ones causally) and keeps the partial output (O and an fp32 log-sum-exp per head) locally.
// After the last step one all-to-all returns every partial to its Q's owner, which merges the N partials.
//
// Q blocks are double-buffered: hop k of a block starts once the block reached the sender (hop k-1 done, or the
// sender's own Q for k = 1) and the receiver has a free buffer (its attention of step k-2 is done), so hops run
// ahead of attention and only the final all-to-all is exposed.
// Per rank received: (N-1) * T/N * B * (q_w*s) + (N-1) * T/N * B * (q_w*s + 4*h_q).
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks lower_dense_pass_q(LayerContext& ctx, const RankTasks& entry) {
  const ShardShape& sh = ctx.shape;
  const double q_bytes = sh.tokens * sh.q_width() * sh.dtype_bytes;
  const double partial_bytes = sh.tokens * (sh.q_width() * sh.dtype_bytes + 4.0 * sh.q_heads);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    std::vector<std::vector<TaskId>> attn(n);  // per rank, per step: its partial attention
    RankTasks arrived = in;                    // per rank: tasks after which it holds the Q of the current step
    RankTasks done = in;                       // per rank: everything it did (its attention and hops it sent)
    for (int k = 0; k < n; ++k) {
      RankTasks next_arrived(n);
      for (int i = 0; i < n; ++i) {
        const int owner = (i - k + n) % n;  // whose Q rank i holds at step k
        if (k > 0) {  // the Q arrives from the left neighbour into one of rank i's two buffers
          const int left = (i + n - 1) % n;
          const TaskId hop = ctx.graph.add_flow(gpus[left], gpus[i], q_bytes, Traffic::CP, "pass-q q", ctx.layer, k);
          ctx.graph.depend_all(hop, arrived[left]);
          ctx.graph.depend_all(hop, in[i]);
          if (k >= 2) ctx.graph.depend(hop, attn[i][k - 2]);
          next_arrived[i] = {hop};
          done[left].push_back(hop);
        } else {
          next_arrived[i] = in[i];
        }
        attn[i].push_back(
            add_kernel(ctx, gpus[i], "partial attention", k, dense_attention_block(ctx, owner, i), next_arrived[i]));
        done[i].push_back(attn[i].back());
      }
      arrived = std::move(next_arrived);
    }
    // One all-to-all returns the N-1 partials each rank kept (rank r holds one partial of every other owner).
    const RankTasks returned =
        alltoall(ctx.graph, gpus, partial_bytes, {Traffic::CP, "pass-q partial out", ctx.layer}, done);
    RankTasks out(n);
    for (int i = 0; i < n; ++i)
      out[i] = {add_kernel(ctx, gpus[i], "merge partials", n, memory_pass_cost(ctx, n * partial_bytes), returned[i])};
    return out;
  });
}

}  // namespace cpsim
