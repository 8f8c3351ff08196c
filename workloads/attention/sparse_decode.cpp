// Compressed and sparse kinds in a decode step (heterogeneous-attention-cp.md; the token on the tail rank):
//   hca (local or allgather)  V4's decode is local: the compressed cache (S/m entries, ~8 MB at 1M) sits on the
//                  token's GPU, which compresses the new token and attends every entry. No communication.
//   csa|dsa full   after the prefill's AllGather every rank holds every entry (the full write-back), so the home
//                  scores all of them (FP8 indexer), keeps the top k and attends those. No communication.
//   csa|dsa select-gather  exact distributed top-k: the home sends the indexer query to every rank, each scores its
//                  E/N entries and returns its best candidates (index + score), the home merges them into the
//                  global top-k (exact: every global winner is among its owner's best), asks each owner for its
//                  selected entries (int32 indices) and receives their KV, then attends the k entries.
#include <cmath>

#include "workloads/attention/closed_form.hpp"
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

// Entries cached per sequence when the step's token attends (itself included), compressed `ratio` times.
double entries(const DecodeContext& ctx, double ratio) { return std::floor((ctx.context + 1) / ratio); }

DecodeAttention full_sparse(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry, double ratio,
                            double k) {
  const LayerContext& l = ctx.layer;
  const double B = l.in.run.batch, e = entries(ctx, ratio);
  std::vector<NamedKernel> kernels;
  if (ratio > 1) kernels.push_back({"compressor", compressor_cost(l, B)});
  kernels.push_back({"indexer", indexer_cost(l, B * e)});
  kernels.push_back({"top-k", topk_cost(l, B * e)});
  kernels.push_back({"sparse attention", decode_attention_cost(ctx, std::min(k, e))});
  return decode_on_home(ctx, gpus, entry, kernels);
}

DecodeAttention select_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry, double ratio,
                              double k) {
  LayerContext& l = ctx.layer;
  TaskGraph& g = l.graph;
  const int n = static_cast<int>(gpus.size()), home = ctx.home;
  const AttentionSpec& a = l.in.model.attention;
  const double B = l.in.run.batch, e = entries(ctx, ratio);
  const DecodeSelection sel = decode_selection(k, e, n, home);
  auto flow = [&](int from, int to, double bytes, const char* name, int step, const std::vector<TaskId>& after) {
    const TaskId f = g.add_flow(gpus[from], gpus[to], bytes, Traffic::CP, name, l.layer, step);
    g.depend_all(f, after);
    return f;
  };
  DecodeAttention out{entry, std::nullopt, 0};
  std::vector<TaskId> query = entry[home];
  if (ratio > 1) query = {add_kernel(l, gpus[home], "compressor", 0, compressor_cost(l, B), query)};
  // Every rank scores its own entries against the token's indexer query (FP8: one byte per element).
  std::vector<std::vector<TaskId>> scored(n);
  for (int r = 0; r < n; ++r) {
    std::vector<TaskId> after = r == home ? query : entry[r];
    if (r != home) {
      const TaskId q = flow(home, r, B * a.indexer_heads * a.indexer_dim, "indexer query", 0, query);
      g.depend_all(q, entry[r]);
      after.push_back(q);
    }
    after = {add_kernel(l, gpus[r], "local indexer", 0, indexer_cost(l, B * e / n), after)};
    scored[r] = {add_kernel(l, gpus[r], "local top-k", 0, topk_cost(l, B * e / n), after)};
  }
  std::vector<TaskId> candidates = scored[home];
  for (int r = 0; r < n; ++r) {
    if (r == home) continue;
    candidates.push_back(flow(r, home, B * sel.candidates * kTopkEntryBytes, "top-k candidates", 1, scored[r]));
    out.pending[r] = {candidates.back()};  // after its scoring
  }
  const TaskId merged =
      add_kernel(l, gpus[home], "global top-k", 2, topk_cost(l, B * n * sel.candidates), candidates);
  std::vector<TaskId> gathered = {merged};
  for (int o = 0; o < n; ++o) {
    if (o == home || sel.owners[o] == 0) continue;
    const TaskId request = flow(home, o, B * sel.owners[o] * kIndexBytes, "selected indices", 3, {merged});
    const TaskId kv = flow(o, home, B * sel.owners[o] * kv_token_bytes(l), "sparse kv gather", 3, {request});
    g.depend_all(kv, scored[o]);
    gathered.push_back(kv);
    out.pending[o].push_back(kv);  // the owner serves the gather
  }
  out.pending[home] = {add_kernel(l, gpus[home], "sparse attention", 4, decode_attention_cost(ctx, sel.k), gathered)};
  return out;
}

}  // namespace

DecodeAttention decode_hca(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const double ratio = ctx.layer.in.model.attention.hca_ratio;
  return decode_on_home(ctx, gpus, entry,
                        {{"compressor", compressor_cost(ctx.layer, ctx.layer.in.run.batch)},
                         {"compressed attention", decode_attention_cost(ctx, entries(ctx, ratio))}});
}
DecodeAttention decode_csa_full(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const AttentionSpec& a = ctx.layer.in.model.attention;
  return full_sparse(ctx, gpus, entry, a.csa_ratio, a.csa_top_k);
}
DecodeAttention decode_csa_select_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const AttentionSpec& a = ctx.layer.in.model.attention;
  return select_gather(ctx, gpus, entry, a.csa_ratio, a.csa_top_k);
}
DecodeAttention decode_dsa_full(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  return full_sparse(ctx, gpus, entry, 1, ctx.layer.in.model.attention.dsa_top_k);
}
DecodeAttention decode_dsa_select_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  return select_gather(ctx, gpus, entry, 1, ctx.layer.in.model.attention.dsa_top_k);
}

}  // namespace cpsim
