// Dense attention with one AllGather of K and V, then local attention of the rank's queries against every key
// (Llama-3's CP; LASP-2H's softmax layers). The causal load follows cp.dense.partition as for ring.
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks lower_dense_allgather(LayerContext& ctx, const RankTasks& entry) {
  const double T = ctx.shape.tokens;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    const RankTasks kv = allgather(ctx.graph, gpus, T * kv_token_bytes(ctx),
                                        {Traffic::CP, "kv allgather", ctx.layer}, in);
    RankTasks done(n);
    for (int q = 0; q < n; ++q) {
      KernelCost total;
      for (int k = 0; k < n; ++k) {
        const KernelCost c = dense_attention_block(ctx, q, k);
        total.flops += c.flops;
        total.hbm_bytes += c.hbm_bytes;
        total.duration_s += c.duration_s;
      }
      done[q] = kv[q];
      done[q].push_back(add_kernel(ctx, gpus[q], "attention", 0, total, kv[q]));
    }
    return done;
  });
}

}  // namespace cpsim
