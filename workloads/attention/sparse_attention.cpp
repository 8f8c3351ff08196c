// Compressed and sparse attention kinds under CP (heterogeneous-attention-cp.md):
//   hca/local      HCA (C128): each rank compresses its own tokens and attends densely to its local compressed
//                  entries only: zero communication (DeepSeek-V4's choice).
//   hca/allgather  AllGather of the compressed KV (B*S/m entries), dense attention over all of them.
//   csa/allgather  CSA (C4): AllGather of the compressed KV (the overlap transform and the global indexer both
//                  need it), FP8 indexer over all compressed entries, top-k, sparse attention over k entries.
//   dsa/allgather  DSA (V3.2 / GLM-5, SGLang's prefill CP): AllGather of the KV latent of all S tokens (kept: N x
//                  memory), FP8 indexer of local queries against all keys, sparse attention over top-k, then an
//                  AllGather of the hidden states (the input of the MoE/FFN layer).
//   csa|dsa/select-gather  "select, then transfer": local indexer over local keys, distributed top-k merge (every
//                  rank sends its k candidates, index + score, to every other rank), sparse gather of the selected
//                  KV from their owners (block_selection.hpp decides the owners), sparse attention. Approximate: a
//                  rank's queries never score other ranks' keys. cp.<kind>.exact: true first AllGathers the indexer
//                  queries, so every rank scores every query against its own entries and returns its top k to each
//                  querying rank, which merges them: the exact top-k, for the queries' traffic.
// Round-robin partition (token i on rank i mod N): a rank's L queries are spread over the sequence, so on average
// half of any evenly spread set of keys precedes them (half_pairs).
#include <algorithm>
#include <cmath>

#include "workloads/attention/block_selection.hpp"
#include "workloads/cp_group_lowering.hpp"
#include "workloads/attention/closed_form.hpp"

namespace cpsim {
namespace {

struct Dims {
  double B, S, N, L, T;  // batch, sequence, CP ranks, tokens per rank per sequence, tokens per rank
};
Dims dims(const LayerContext& ctx) {
  const double B = ctx.in.run.batch, S = double(ctx.in.run.seq_len), N = ctx.in.parallel.cp;
  return {B, S, N, S / N, B * S / N};
}

RankTasks compressed_lowering(LayerContext& ctx, const RankTasks& entry, double ratio, bool gather, double top_k) {
  const Dims d = dims(ctx);
  const double local_entries = d.L / ratio, all_entries = d.S / ratio;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks ready(n);
    for (int r = 0; r < n; ++r) ready[r] = {add_kernel(ctx, gpus[r], "compressor", 0, compressor_cost(ctx, d.T), in[r])};
    if (gather)
      ready = allgather(ctx.graph, gpus, d.B * local_entries * kv_token_bytes(ctx),
                             {Traffic::CP, "compressed kv allgather", ctx.layer}, ready);
    const double visible = gather ? all_entries : local_entries;
    RankTasks done(n);
    for (int r = 0; r < n; ++r) {
      std::vector<TaskId> after = ready[r];
      double pairs = d.B * half_pairs(d.L, visible);
      if (top_k > 0) {  // CSA: score every visible entry, keep k per query
        after = {add_kernel(ctx, gpus[r], "indexer", 1, indexer_cost(ctx, pairs), after)};
        after = {add_kernel(ctx, gpus[r], "top-k", 1, topk_cost(ctx, pairs), after)};
        pairs = d.T * std::min(top_k, visible);
      }
      const KernelCost attn = attention_pairs_cost(ctx, pairs, d.T, d.B * std::min(visible, top_k > 0 ? top_k : visible));
      done[r] = ready[r];
      done[r].push_back(add_kernel(ctx, gpus[r], top_k > 0 ? "sparse attention" : "compressed attention", 2, attn, after));
    }
    return done;
  });
}

RankTasks select_then_gather(LayerContext& ctx, const RankTasks& entry, double ratio, double top_k, bool exact) {
  const Dims d = dims(ctx);
  const AttentionSpec& a = ctx.in.model.attention;
  const double local_entries = d.L / ratio;
  const int k = static_cast<int>(top_k);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks ready(n), scored(n);
    for (int r = 0; r < n; ++r) {
      ready[r] = in[r];
      if (ratio > 1) ready[r] = {add_kernel(ctx, gpus[r], "compressor", 0, compressor_cost(ctx, d.T), in[r])};
    }
    // Exact: every rank's indexer queries (FP8) reach every rank, which scores all S queries against its own
    // entries; approximate: a rank scores its own L queries against its own entries only.
    if (exact)
      ready = allgather(ctx.graph, gpus, d.T * a.indexer_heads * a.indexer_dim, {Traffic::CP, "indexer query allgather", ctx.layer},
                        ready);
    const double pairs = d.B * half_pairs(exact ? d.S : d.L, local_entries);
    for (int r = 0; r < n; ++r) {
      const TaskId scores = add_kernel(ctx, gpus[r], "local indexer", 0, indexer_cost(ctx, pairs), ready[r]);
      scored[r] = {add_kernel(ctx, gpus[r], "local top-k", 0, topk_cost(ctx, pairs), {scores})};
    }
    // Distributed top-k, k candidates (int32 index + fp32 score) per message. Exact: each rank returns its best
    // entries for each querying rank, which merges them into the global top-k; approximate: every rank's own top k
    // to every other rank.
    RankTasks merged;
    if (exact) {
      merged = alltoall(ctx.graph, gpus, d.B * k * kTopkEntryBytes, {Traffic::CP, "top-k candidates", ctx.layer}, scored);
      for (int r = 0; r < n; ++r)
        merged[r] = {add_kernel(ctx, gpus[r], "global top-k", 1, topk_cost(ctx, d.B * n * k), merged[r])};
    } else {
      merged = direct_allgather(ctx.graph, gpus, d.B * k * kTopkEntryBytes, {Traffic::CP, "top-k merge", ctx.layer},
                                scored);
    }
    std::vector<std::vector<int>> owners(n);
    for (int q = 0; q < n; ++q) owners[q] = selections_per_owner(k, n, q, MobaCpPlan{});  // spread uniformly
    const KernelCost attn = attention_pairs_cost(ctx, d.T * top_k, d.T, d.B * top_k);
    return gather_then_attend(ctx, gpus, owners, d.B * kv_token_bytes(ctx), "sparse kv gather", merged, merged, merged,
                              "sparse attention", attn);
  });
}

}  // namespace

RankTasks lower_hca_local(LayerContext& ctx, const RankTasks& entry) {
  return compressed_lowering(ctx, entry, ctx.in.model.attention.hca_ratio, false, 0);
}
RankTasks lower_hca_allgather(LayerContext& ctx, const RankTasks& entry) {
  return compressed_lowering(ctx, entry, ctx.in.model.attention.hca_ratio, true, 0);
}
RankTasks lower_csa_allgather(LayerContext& ctx, const RankTasks& entry) {
  return compressed_lowering(ctx, entry, ctx.in.model.attention.csa_ratio, true, ctx.in.model.attention.csa_top_k);
}
RankTasks lower_csa_select_gather(LayerContext& ctx, const RankTasks& entry) {
  return select_then_gather(ctx, entry, ctx.in.model.attention.csa_ratio, ctx.in.model.attention.csa_top_k,
                            ctx.in.cp.exact_selection.count(AttentionKind::CSA) > 0);
}
RankTasks lower_dsa_select_gather(LayerContext& ctx, const RankTasks& entry) {
  return select_then_gather(ctx, entry, 1, ctx.in.model.attention.dsa_top_k,
                            ctx.in.cp.exact_selection.count(AttentionKind::DSA) > 0);
}

namespace {

// Keys the queries at positions a .. a+b-1 see causally, each capped at `cap` (the indexer: no cap; the sparse
// attention: top-k): sum over x = a+1 .. a+b of min(cap, x).
double capped_causal_keys(double a, double b, double cap) {
  const double below = std::clamp(cap - a, 0.0, b);  // queries that see fewer than cap keys
  return below * (2 * a + below + 1) / 2 + (below < b ? (b - below) * cap : 0);
}

// Per sequence, the keys rank r's queries see under DSA's token split (an exact count, not an average): zigzag
// holds blocks r and 2N-1-r of S/2N tokens; round-robin the positions j*N + r, which see j*N + r + 1 keys each.
double dsa_rank_keys(DsaSplit split, double S, int n, int r, double cap) {
  if (split == DsaSplit::ZIGZAG) {
    const double b = S / (2 * n);
    return capped_causal_keys(r * b, b, cap) + capped_causal_keys((2 * n - 1 - r) * b, b, cap);
  }
  const double L = S / n;
  const double seen = std::clamp(std::floor((cap - r - 1) / n) + 1, 0.0, L);  // queries below the cap
  return n * seen * (seen - 1) / 2 + seen * (r + 1) + (seen < L ? (L - seen) * cap : 0);
}

}  // namespace

RankTasks lower_dsa_allgather(LayerContext& ctx, const RankTasks& entry) {
  const Dims d = dims(ctx);
  const double k = ctx.in.model.attention.dsa_top_k, s = ctx.shape.dtype_bytes;
  const DsaSplit split = ctx.in.cp.dsa_partition;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    const RankTasks kv = allgather(ctx.graph, gpus, d.T * kv_token_bytes(ctx),
                                        {Traffic::CP, "dsa kv allgather", ctx.layer}, in);
    RankTasks attended(n);
    for (int r = 0; r < n; ++r) {
      // The indexer scores every local query against all earlier keys; the sparse attention reads min(k, keys).
      const double pairs = d.B * dsa_rank_keys(split, d.S, n, r, INFINITY);
      std::vector<TaskId> after = {add_kernel(ctx, gpus[r], "indexer", 1, indexer_cost(ctx, pairs), kv[r])};
      after = {add_kernel(ctx, gpus[r], "top-k", 1, topk_cost(ctx, pairs), after)};
      const double selected = d.B * dsa_rank_keys(split, d.S, n, r, k);
      const KernelCost attn = attention_pairs_cost(ctx, selected, d.T, d.B * std::min(k, d.S));
      attended[r] = {add_kernel(ctx, gpus[r], "sparse attention", 2, attn, after)};
    }
    RankTasks done = allgather(ctx.graph, gpus, d.T * ctx.in.model.d_model * s,
                                    {Traffic::CP, "dsa hidden allgather", ctx.layer}, attended);
    for (int r = 0; r < n; ++r) done[r].insert(done[r].end(), kv[r].begin(), kv[r].end());
    return done;
  });
}

}  // namespace cpsim
