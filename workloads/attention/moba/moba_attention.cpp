// MoBA block-sparse attention under CP (heterogeneous-attention-cp.md, "MoBA 块级稀疏在 CP 下怎么编排"), two
// phases: (1) every rank mean-pools its local blocks into centroids and AllGathers them (B*S/B_blk centroids of the
// key width), then scores its queries against all centroids and picks k_block blocks; (2) it gathers the selected
// blocks' K and V from their owners, then runs attention over k_block * B_blk keys. Which ranks own the selected
// blocks follows cp.moba.selection (block_selection.hpp); an owner serves every rank that picked its blocks, so a
// hot rank's outgoing link and copy engine become the bottleneck the seed warns about.
#include "workloads/attention/block_selection.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks lower_moba_gather(LayerContext& ctx, const RankTasks& entry) {
  const AttentionSpec& a = ctx.in.model.attention;
  const double B = ctx.in.run.batch, S = double(ctx.in.run.seq_len), N = ctx.in.parallel.cp;
  const double L = S / N, T = B * L, blk = a.moba_block, s = ctx.shape.dtype_bytes;
  const int k = a.moba_top_k_blocks;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks pooled(n);
    for (int r = 0; r < n; ++r)
      pooled[r] = {add_kernel(ctx, gpus[r], "centroids", 0, memory_pass_cost(ctx, T * key_width(ctx) * s), in[r])};
    const RankTasks centroids = allgather(ctx.graph, gpus, B * (L / blk) * key_width(ctx) * s,
                                               {Traffic::CP, "moba centroid allgather", ctx.layer}, pooled);
    RankTasks gated(n), done(n);
    for (int r = 0; r < n; ++r) {
      const double scores = T * (S / blk);
      gated[r] = {add_kernel(ctx, gpus[r], "block gating", 1, gemm_cost(ctx, T, key_width(ctx), S / blk), centroids[r])};
      gated[r] = {add_kernel(ctx, gpus[r], "top-k blocks", 1, memory_pass_cost(ctx, scores * 4), gated[r])};
      done[r] = centroids[r];
    }
    std::vector<std::vector<int>> owners(n);
    for (int q = 0; q < n; ++q) owners[q] = selections_per_owner(k, n, q, ctx.in.cp.moba);
    const KernelCost attn = attention_pairs_cost(ctx, T * k * blk, T, B * k * blk);
    return gather_then_attend(ctx, gpus, owners, B * blk * kv_token_bytes(ctx), "moba block gather", gated, in, done,
                              "block attention", attn);
  });
}

}  // namespace cpsim
