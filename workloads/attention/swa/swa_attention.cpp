// Sliding-window attention under CP (heterogeneous-attention-cp.md, "SWA 下 CP 通信为什么几乎为 0"):
//   boundary (contiguous partition): rank r holds tokens [rL, (r+1)L), L = S/N. Its queries see the last n_win
//     keys; only the first n_win queries reach into rank r-1, and only into its last n_win tokens, so rank r-1
//     sends those n_win tokens' K and V once (B * n_win * c_kv). Local attention starts at once; the boundary part
//     waits for the transfer. Needs n_win <= L (checked when the scenario loads).
//   allgather (round-robin partition, token i on rank i mod N): a rank's queries are spread over the whole
//     sequence, so together their windows cover every remote token: SWA needs the full KV, an AllGather.
#include <algorithm>

#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

// Pairs of L consecutive queries starting at a sequence's first token, each seeing min(w, position + 1) keys.
double window_pairs_from_start(double L, double w) {
  return w >= L ? L * (L + 1) / 2 : w * (w + 1) / 2 + (L - w) * w;
}

}  // namespace

RankTasks lower_swa_boundary(LayerContext& ctx, const RankTasks& entry) {
  const double B = ctx.in.run.batch, L = double(ctx.in.run.seq_len) / ctx.in.parallel.cp;
  const double w = ctx.in.model.sliding_window;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks done(n);
    for (int r = 0; r < n; ++r) {
      // Inside the chunk: each of the L queries sees min(w, i + 1) local keys (rank 0's chunk starts the sequence,
      // every other chunk is cut at its left edge in the same way).
      const KernelCost local = attention_pairs_cost(ctx, B * window_pairs_from_start(L, w), B * L, B * L);
      const TaskId local_attn = add_kernel(ctx, gpus[r], "swa attention", 0, local, in[r]);
      done[r].push_back(local_attn);
    }
    for (int r = 1; r < n; ++r) {
      const TaskId kv = ctx.graph.add_flow(gpus[r - 1], gpus[r], B * w * kv_token_bytes(ctx), Traffic::CP,
                                           "swa boundary kv", ctx.layer, 0);
      ctx.graph.depend_all(kv, in[r - 1]);
      ctx.graph.depend_all(kv, in[r]);
      // Query i < w of rank r sees w - 1 - i keys of rank r-1: w(w-1)/2 pairs.
      const KernelCost edge = attention_pairs_cost(ctx, B * w * (w - 1) / 2, B * w, B * w);
      const TaskId edge_attn = add_kernel(ctx, gpus[r], "swa boundary attention", 1, edge, {kv});
      done[r] = {edge_attn};
      done[r - 1].push_back(kv);  // the sender's copy engine is busy until the transfer ends
    }
    return done;
  });
}

RankTasks lower_swa_allgather(LayerContext& ctx, const RankTasks& entry) {
  const double B = ctx.in.run.batch, S = double(ctx.in.run.seq_len), N = ctx.in.parallel.cp;
  const double w = ctx.in.model.sliding_window, L = S / N;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const RankTasks gathered =
        allgather(ctx.graph, gpus, B * L * kv_token_bytes(ctx), {Traffic::CP, "swa allgather kv", ctx.layer}, in);
    RankTasks done(gpus.size());
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      // Round-robin: the rank's L queries are every N-th position, so it does 1/N of the sequence's window pairs.
      const KernelCost c = attention_pairs_cost(ctx, B * window_pairs_from_start(S, w) / N, B * L, B * S);
      done[r] = gathered[r];
      done[r].push_back(add_kernel(ctx, gpus[r], "swa attention", 0, c, gathered[r]));
    }
    return done;
  });
}

}  // namespace cpsim
