// DeepSpeed-Ulysses and USP under CP (cp-overview.md; the seed's 7.3):
//   ulysses: a pairwise all-to-all turns every rank's (S/N tokens, all heads) Q, K, V into (all S tokens, h/N
//     heads); each rank runs full causal attention on its heads; a second all-to-all returns O to sequence shards.
//     KV heads fewer than N are replicated (each rank needs one). Per rank received:
//       (N-1) * T * d * s * (2*h_q/N + 2*kv_r),  T = B*S/N tokens, kv_r = max(1, h_kv/N).
//   usp: Ulysses inside groups of u = ulysses_degree consecutive CP ranks, ring attention (pass-KV) across the
//     r = N/u groups on the u-group's S/r tokens and h/u heads. Per rank received:
//       (u-1) * T * d * s * (2*h_q/u + 2*kv_r(u)) + (r-1) * B*S/r * 2 * kv_r(u) * d * s.
//     Ring blocks assume the zigzag balance: the diagonal block is causal, every other block half masked.
#include <algorithm>

#include "workloads/cp_group_lowering.hpp"
#include "workloads/attention/dense/ring_attention.hpp"

namespace cpsim {
namespace {

double kv_heads_per_rank(const LayerContext& ctx, int degree) {
  return std::max(1.0, double(ctx.shape.kv_heads) / degree);
}

// Bytes one rank sends to one peer in the QKV all-to-all (its T tokens of the peer's heads) and in the O all-to-all.
double qkv_pair_bytes(const LayerContext& ctx, int degree) {
  const ShardShape& sh = ctx.shape;
  return sh.tokens * sh.head_dim * sh.dtype_bytes * (double(sh.q_heads) / degree + 2 * kv_heads_per_rank(ctx, degree));
}
double out_pair_bytes(const LayerContext& ctx, int degree) {
  const ShardShape& sh = ctx.shape;
  return sh.tokens * sh.head_dim * sh.dtype_bytes * (double(sh.q_heads) / degree);
}

// Attention of `q_tokens` queries on `heads` heads over `pairs` pairs; `shape` is the kernel call per sequence.
KernelCost heads_attention_cost(const LayerContext& ctx, double pairs, double heads, double q_tokens, double kv_tokens,
                                double kv_heads, AttentionShape shape) {
  const ShardShape& sh = ctx.shape;
  const double flops = 4 * pairs * heads * sh.head_dim;
  const double bytes = (2 * q_tokens * heads + 2 * kv_tokens * kv_heads) * sh.head_dim * sh.dtype_bytes;
  shape.heads = heads, shape.batch = ctx.in.run.batch, shape.group = heads / kv_heads;
  return {attention_time_s(ctx.in.gpu, ctx.in.run.dtype, shape, flops, bytes), flops, bytes};
}

}  // namespace

RankTasks lower_dense_ulysses(LayerContext& ctx, const RankTasks& entry) {
  const double B = ctx.in.run.batch, S = double(ctx.in.run.seq_len);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    const RankTasks scattered = alltoall(ctx.graph, gpus, qkv_pair_bytes(ctx, n),
                                                  {Traffic::CP, "ulysses qkv all-to-all", ctx.layer}, in);
    RankTasks attended(n);
    // Every rank attends over the whole sequence on its heads: causal (S(S+1)/2 pairs) or, run.mask: full, S^2.
    const bool full = ctx.in.run.full_mask;
    KernelCost c = heads_attention_cost(ctx, full ? B * S * S : B * S * (S + 1) / 2, double(ctx.shape.q_heads) / n,
                                        B * S, B * S, kv_heads_per_rank(ctx, n),
                                        {S, S, 1, 1, full ? Mask::FULL : Mask::CAUSAL_DIAGONAL, 1});
    for (int r = 0; r < n; ++r) {
      attended[r] = scattered[r];
      attended[r].push_back(add_kernel(ctx, gpus[r], "attention", 0, c, scattered[r]));  // scaled in a backward
    }
    return alltoall(ctx.graph, gpus, out_pair_bytes(ctx, n), {Traffic::CP, "ulysses out all-to-all", ctx.layer},
                             attended);
  });
}

RankTasks lower_dense_usp_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext bwd = ctx;
  bwd.backward_scale = kBackwardFactor;
  return lower_dense_usp(bwd, entry);
}

// With ctx.backward_scale > 1 (training's backward): the all-to-alls carry dO in and dQ, dK, dV out (the forward's
// volumes), the ring is the ring backward (K, V with their dK, dV: twice the block, then the dK, dV hop home).
RankTasks lower_dense_usp(LayerContext& ctx, const RankTasks& entry) {
  const bool backward = ctx.backward_scale > 1;
  const double B = ctx.in.run.batch, S = double(ctx.in.run.seq_len);
  const int n = ctx.in.parallel.cp, u = ctx.in.cp.dense.ulysses_degree, rings = n / u;
  const double c = S / rings;  // tokens per sequence a u-group holds
  const double heads = double(ctx.shape.q_heads) / u, kv_heads = kv_heads_per_rank(ctx, u);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    RankTasks after_a2a(n);
    for (int g = 0; g < rings; ++g) {  // Ulysses groups: CP ranks [g*u, (g+1)*u)
      std::vector<int> group(gpus.begin() + g * u, gpus.begin() + (g + 1) * u);
      const RankTasks group_in(in.begin() + g * u, in.begin() + (g + 1) * u);
      const RankTasks done = alltoall(ctx.graph, group, qkv_pair_bytes(ctx, u),
                                               {Traffic::CP, "usp qkv all-to-all", ctx.layer}, group_in);
      for (int i = 0; i < u; ++i) after_a2a[g * u + i] = done[i];
    }
    RankTasks after_ring(n);
    const double block_bytes = B * c * 2 * kv_heads * ctx.shape.head_dim * ctx.shape.dtype_bytes;
    const auto scaled = [&](KernelCost k) {
      return KernelCost{k.duration_s * ctx.backward_scale, k.flops * ctx.backward_scale, k.hbm_bytes * ctx.backward_scale};
    };
    const RingAttentionSpec spec{ctx.layer, (backward ? 2 : 1) * block_bytes, [&](int q, int kv) {
                                   if (ctx.in.run.full_mask)
                                     return scaled(heads_attention_cost(ctx, B * c * c, heads, B * c, B * c, kv_heads,
                                                                        {c, c, 1, 1, Mask::FULL, 1}));
                                   const double pairs = q == kv ? B * c * (c + 1) / 2 : B * c * c / 2;
                                   // Zigzag blocks: causal diagonal, else a half block (c x c/2) non-causal.
                                   const AttentionShape shape = q == kv ? AttentionShape{c, c, 1, 1, Mask::CAUSAL_DIAGONAL, 1}
                                                                        : AttentionShape{c, c / 2, 1, 1, Mask::FULL, 1};
                                   return scaled(heads_attention_cost(ctx, pairs, heads, B * c, B * c, kv_heads, shape));
                                 }};
    for (int i = 0; i < u; ++i) {  // rings: the i-th rank of every Ulysses group
      std::vector<int> ring;
      RankTasks ring_in;
      for (int g = 0; g < rings; ++g) ring.push_back(gpus[g * u + i]), ring_in.push_back(after_a2a[g * u + i]);
      RankTasks done = ring_attention(ctx.graph, ring, spec, ring_in);
      if (backward) done = return_dkv_home(ctx.graph, ring, done, block_bytes, ctx.layer);
      for (int g = 0; g < rings; ++g) after_ring[g * u + i] = done[g];
    }
    RankTasks out(n);
    for (int g = 0; g < rings; ++g) {
      std::vector<int> group(gpus.begin() + g * u, gpus.begin() + (g + 1) * u);
      const RankTasks group_in(after_ring.begin() + g * u, after_ring.begin() + (g + 1) * u);
      const RankTasks done = alltoall(ctx.graph, group, out_pair_bytes(ctx, u),
                                               {Traffic::CP, "usp out all-to-all", ctx.layer}, group_in);
      for (int i = 0; i < u; ++i) out[g * u + i] = done[i];
    }
    return out;
  });
}

}  // namespace cpsim
