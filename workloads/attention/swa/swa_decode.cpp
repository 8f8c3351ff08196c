// Sliding-window decode under CP (heterogeneous-attention-cp.md, SWA): the token (on the tail rank, where new KV is
// appended) attends only the last n_win keys.
//   boundary  (contiguous partition): the window is on the tail rank, or reaches into its left neighbour when the
//             tail holds fewer than n_win tokens (never, while n_win <= S/cp as the scenario checks).
//   allgather (round-robin partition): the window's tokens are spread over every rank, n_win/N each: the other
//             ranks send theirs to the tail before it attends.
#include <algorithm>

#include "workloads/attention/block_selection.hpp"
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

double window_keys(const DecodeContext& ctx) {
  return std::min(double(ctx.layer.in.model.sliding_window), ctx.context + 1);
}

// The window's K and V from `from` to the home (B * tokens * c_kv), after both have passed their entry.
TaskId window_flow(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry, int from, double tokens) {
  LayerContext& l = ctx.layer;
  const TaskId f = l.graph.add_flow(gpus[from], gpus[ctx.home], l.in.run.batch * tokens * kv_token_bytes(l), Traffic::CP,
                                    "swa window kv", l.layer, 0);
  l.graph.depend_all(f, entry[from]);
  l.graph.depend_all(f, entry[ctx.home]);
  return f;
}

}  // namespace

DecodeAttention decode_swa_boundary(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const int n = static_cast<int>(gpus.size());
  const double cached = ctx.layer.in.run.seq_len, local = cached / n + (ctx.context - cached);  // tail's tokens
  const double w = window_keys(ctx), remote = n > 1 ? std::max(0.0, w - (local + 1)) : 0;
  RankTasks ready = entry;
  DecodeAttention out{entry, std::nullopt, 0};
  if (remote > 0) {
    const TaskId f = window_flow(ctx, gpus, entry, ctx.home - 1, remote);
    ready[ctx.home].push_back(f);
    out.pending[ctx.home - 1].push_back(f);
  }
  out.pending[ctx.home] = {
      add_kernel(ctx.layer, gpus[ctx.home], "swa attention", 1, decode_attention_cost(ctx, w), ready[ctx.home])};
  return out;
}

DecodeAttention decode_swa_allgather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const int n = static_cast<int>(gpus.size());
  const int w = static_cast<int>(window_keys(ctx));
  const std::vector<int> share = selections_per_owner(w, n, ctx.home, MobaCpPlan{});  // round-robin: w/N each
  DecodeAttention out{entry, std::nullopt, 0};
  std::vector<TaskId> ready = entry[ctx.home];
  for (int o = 0; o < n; ++o) {
    if (o == ctx.home || share[o] == 0) continue;
    const TaskId f = window_flow(ctx, gpus, entry, o, share[o]);
    ready.push_back(f);
    out.pending[o].push_back(f);
  }
  out.pending[ctx.home] = {add_kernel(ctx.layer, gpus[ctx.home], "swa attention", 1, decode_attention_cost(ctx, w), ready)};
  return out;
}

}  // namespace cpsim
