// Training backward passes of the non-dense kinds (run.phase: train), after the forward layers. Each replays its
// forward lowering with the backward kernels (kBackwardFactor x: recompute + gradients; the replay re-sends what
// the forward did not keep), then returns the gradients of what it gathered to their owners:
//   swa/boundary    the window's K, V from the left neighbour again, then its dK, dV back to it (B*n_win*c_kv).
//   swa/allgather   AllGather of K, V again, then a reduce-scatter of the dK, dV computed for every rank's keys.
//   hca/local       no communication either way.
//   hca|csa/allgather  AllGather of the compressed KV again, reduce-scatter of its gradients.
//   dsa/allgather   the full KV was written back on every rank (kept): no re-gather; the sparse attention and
//                   indexer backward, then reduce-scatters of the gathered hidden states' and KV latents' gradients.
//   linear|ssm/lasp2  the state AllGather once more (LASP-2's backward AllGather of the state gradients dM, the
//                   same size as M): one AllGather forward, one backward.
//   linear|ssm/lasp1  the N-1 hop state chain once more (the backward recurrence of dM, same length and bytes):
//                   2(N-1) serial hops per training step.
//   csa|dsa/select-gather  the forward again (indexer, top-k merge, sparse gather: nothing gathered is kept), then
//                   each rank returns the dK, dV of the entries it gathered to their owners (the gather reversed).
//   moba/gather     the same: centroids and selected blocks again, then the blocks' dK, dV back to their owners
//                   (a hot owner receives every rank's gradients: the seed's hot-rank bottleneck, both ways).
#include "workloads/attention/block_selection.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

LayerContext backward_of(const LayerContext& ctx) {
  LayerContext b = ctx;
  b.backward_scale = kBackwardFactor;
  return b;
}

// The gradients of KV that every rank gathered (`tokens_per_rank` tokens of `token_bytes` from each rank) return to
// their owners: a reduce-scatter of n blocks.
RankTasks reduce_gradients(LayerContext& ctx, const RankTasks& done, double tokens_per_rank, double token_bytes,
                           const char* name) {
  return for_each_cp_group(ctx, done, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const double n = static_cast<double>(gpus.size());
    return reduce_scatter(ctx.graph, gpus, n * tokens_per_rank * token_bytes, {Traffic::CP, name, ctx.layer}, in);
  });
}

RankTasks compressed_backward(LayerContext& ctx, const RankTasks& entry, AttentionLowering forward, double ratio) {
  LayerContext b = backward_of(ctx);
  const RankTasks done = forward(b, entry);
  return reduce_gradients(ctx, done, ctx.shape.tokens / ratio, kv_token_bytes(ctx), "compressed dkv reduce-scatter");
}

// The gradients of what each rank gathered go back to the owners: rank q sends owner o the dK, dV of its
// owners[q][o] selections (`k` split over the owners by `plan`, block_selection.hpp).
RankTasks return_selected_gradients(LayerContext& ctx, const RankTasks& done, int k, const MobaCpPlan& plan,
                                    double bytes_per_selection, const char* name) {
  return for_each_cp_group(ctx, done, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks out = in;
    for (int q = 0; q < n; ++q) {
      const std::vector<int> owners = selections_per_owner(k, n, q, plan);
      for (int o = 0; o < n; ++o) {
        if (o == q || owners[o] == 0) continue;
        const TaskId f = ctx.graph.add_flow(gpus[q], gpus[o], owners[o] * bytes_per_selection, Traffic::CP, name,
                                            ctx.layer, 4);
        ctx.graph.depend_all(f, in[q]);
        out[q].push_back(f);
        out[o].push_back(f);
      }
    }
    return out;
  });
}

RankTasks select_gather_backward(LayerContext& ctx, const RankTasks& entry, AttentionLowering forward, int k) {
  LayerContext b = backward_of(ctx);
  return return_selected_gradients(ctx, forward(b, entry), k, MobaCpPlan{}, ctx.in.run.batch * kv_token_bytes(ctx),
                                   "sparse dkv return");
}

}  // namespace

RankTasks lower_csa_select_gather_backward(LayerContext& ctx, const RankTasks& entry) {
  return select_gather_backward(ctx, entry, lower_csa_select_gather, ctx.in.model.attention.csa_top_k);
}

RankTasks lower_dsa_select_gather_backward(LayerContext& ctx, const RankTasks& entry) {
  return select_gather_backward(ctx, entry, lower_dsa_select_gather, ctx.in.model.attention.dsa_top_k);
}

RankTasks lower_moba_gather_backward(LayerContext& ctx, const RankTasks& entry) {
  const AttentionSpec& a = ctx.in.model.attention;
  LayerContext b = backward_of(ctx);
  return return_selected_gradients(ctx, lower_moba_gather(b, entry), a.moba_top_k_blocks, ctx.in.cp.moba,
                                   ctx.in.run.batch * a.moba_block * kv_token_bytes(ctx), "moba block dkv return");
}

RankTasks lower_swa_boundary_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  const RankTasks done = lower_swa_boundary(b, entry);
  const double bytes = ctx.in.run.batch * ctx.in.model.sliding_window * kv_token_bytes(ctx);
  return for_each_cp_group(ctx, done, [&](const std::vector<int>& gpus, const RankTasks& in) {
    RankTasks out = in;
    for (std::size_t r = 1; r < gpus.size(); ++r) {  // rank r computed dK, dV for rank r-1's last n_win tokens
      const TaskId f = ctx.graph.add_flow(gpus[r], gpus[r - 1], bytes, Traffic::CP, "swa boundary dkv", ctx.layer, 2);
      ctx.graph.depend_all(f, in[r]);
      out[r].push_back(f);
      out[r - 1].push_back(f);
    }
    return out;
  });
}

RankTasks lower_swa_allgather_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  const RankTasks done = lower_swa_allgather(b, entry);
  return reduce_gradients(ctx, done, ctx.shape.tokens, kv_token_bytes(ctx), "swa dkv reduce-scatter");
}

RankTasks lower_hca_local_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  return lower_hca_local(b, entry);
}
RankTasks lower_hca_allgather_backward(LayerContext& ctx, const RankTasks& entry) {
  return compressed_backward(ctx, entry, lower_hca_allgather, ctx.in.model.attention.hca_ratio);
}
RankTasks lower_csa_allgather_backward(LayerContext& ctx, const RankTasks& entry) {
  return compressed_backward(ctx, entry, lower_csa_allgather, ctx.in.model.attention.csa_ratio);
}

RankTasks lower_dsa_allgather_backward(LayerContext& ctx, const RankTasks& entry) {
  const AttentionSpec& a = ctx.in.model.attention;
  const double T = ctx.shape.tokens, B = ctx.in.run.batch, S = double(ctx.in.run.seq_len);
  const double k = std::min(double(a.dsa_top_k), S);
  LayerContext b = backward_of(ctx);
  const RankTasks attended = for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    RankTasks out(gpus.size());
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      // The forward's kernels (averaged over the split: T queries, each scoring half the sequence), as backward.
      const double pairs = T * S / 2;
      const TaskId idx = add_kernel(b, gpus[r], "indexer", 1, indexer_cost(ctx, pairs), in[r]);
      out[r] = {add_kernel(b, gpus[r], "sparse attention", 2, attention_pairs_cost(ctx, T * k, T, B * k), {idx})};
    }
    return out;
  });
  const RankTasks hidden = reduce_gradients(ctx, attended, T, ctx.in.model.d_model * ctx.shape.dtype_bytes,
                                            "dsa hidden grad reduce-scatter");
  return reduce_gradients(ctx, hidden, T, kv_token_bytes(ctx), "dsa dkv reduce-scatter");
}

RankTasks lower_linear_lasp1_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  return lower_linear_lasp1(b, entry);
}
RankTasks lower_linear_lasp2_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  return lower_linear_lasp2(b, entry);
}
RankTasks lower_ssm_lasp1_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  return lower_ssm_lasp1(b, entry);
}
RankTasks lower_ssm_lasp2_backward(LayerContext& ctx, const RankTasks& entry) {
  LayerContext b = backward_of(ctx);
  return lower_ssm_lasp2(b, entry);
}

}  // namespace cpsim
