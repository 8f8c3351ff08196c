// Backward passes of the dense CP algorithms for training (run.phase: train), after the forward layers:
//   ring:      Megatron's ring backward: each rank's K and V travel the ring again together with the dK/dV
//              accumulated for them (N-1 steps of twice the block), then one last hop returns dK/dV to the owner;
//              per step the attention backward costs 2.5x the forward block (FlashAttention: recompute + dQ, dK, dV).
//              Per rank received: (2(N-1) + 1) * block.
//   ulysses:   all-to-all of dO (sequence -> heads), attention backward on S tokens x h/N heads, all-to-all of dQ,
//              dK, dV back: the same bytes as the forward.
//   allgather: AllGather of K and V again (not kept), attention backward against all keys, then a reduce-scatter of
//              the dK/dV computed for every rank's keys: per rank received (N-1)/N * S * c_kv twice.
//   usp:       the Ulysses all-to-alls as the forward's, the ring backward above across the N/u groups
//              (ulysses_attention.cpp, lower_dense_usp_backward).
#include "workloads/cp_group_lowering.hpp"
#include "workloads/attention/dense/ring_attention.hpp"

namespace cpsim {
namespace {

KernelCost scaled(KernelCost c, double f) { return {c.duration_s * f, c.flops * f, c.hbm_bytes * f}; }

double block_bytes(const LayerContext& ctx) {
  return ctx.shape.tokens * kv_token_bytes(ctx);
}

}  // namespace

RankTasks lower_dense_ring_backward(LayerContext& ctx, const RankTasks& entry) {
  const RingAttentionSpec spec{ctx.layer, 2 * block_bytes(ctx), [&ctx](int q, int kv) {
                                 return scaled(dense_attention_block(ctx, q, kv), kBackwardFactor);
                               }};
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    return return_dkv_home(ctx.graph, gpus, ring_attention(ctx.graph, gpus, spec, in), block_bytes(ctx), ctx.layer);
  });
}

RankTasks return_dkv_home(TaskGraph& g, const std::vector<int>& gpus, const RankTasks& done, double bytes, int layer) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return done;
  RankTasks out = done;
  for (int i = 0; i < n; ++i) {
    const int owner = (i + 1) % n;
    const TaskId f = g.add_flow(gpus[i], gpus[owner], bytes, Traffic::CP, "ring dkv home", layer, n);
    g.depend_all(f, done[i]);
    g.depend_all(f, done[owner]);
    out[i].push_back(f);
    out[owner].push_back(f);
  }
  return out;
}

// The forward lowering's pattern (all-to-all, attention, all-to-all) with the backward attention cost: the
// all-to-all volumes of dO in and dQ, dK, dV out equal those of Q, K, V in and O out.
RankTasks lower_dense_ulysses_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext bwd = ctx;
  bwd.backward_scale = kBackwardFactor;
  return lower_dense_ulysses(bwd, entry);
}

RankTasks lower_dense_allgather_backward(LayerContext& ctx, const RankTasks& entry) {
  const double T = ctx.shape.tokens;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    const RankTasks kv = allgather(ctx.graph, gpus, T * kv_token_bytes(ctx), {Traffic::CP, "kv allgather", ctx.layer}, in);
    RankTasks grads(n);
    for (int q = 0; q < n; ++q) {
      KernelCost total;
      for (int k = 0; k < n; ++k) {
        const KernelCost c = scaled(dense_attention_block(ctx, q, k), kBackwardFactor);
        total = {total.duration_s + c.duration_s, total.flops + c.flops, total.hbm_bytes + c.hbm_bytes};
      }
      grads[q] = kv[q];
      grads[q].push_back(add_kernel(ctx, gpus[q], "attention backward", 0, total, kv[q]));
    }
    // Each rank produced dK/dV for every rank's keys: reduce-scatter them (n blocks of T tokens each).
    return reduce_scatter(ctx.graph, gpus, n * T * kv_token_bytes(ctx), {Traffic::CP, "dkv reduce-scatter", ctx.layer},
                               grads);
  });
}

}  // namespace cpsim
