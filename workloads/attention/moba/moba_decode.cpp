// MoBA in a decode step (heterogeneous-attention-cp.md, MoBA): the token (on the tail rank) scores the centroids of
// every cached block (all ranks' centroids are there since the prefill's AllGather), keeps the top k_block, asks
// each owner for its selected blocks (int32 block indices) and receives their K and V, then attends k_block * B_blk
// keys. Where the selected blocks live follows cp.moba.selection (block_selection.hpp), seen from the tail rank.
#include <cmath>

#include "workloads/attention/block_selection.hpp"
#include "workloads/attention/closed_form.hpp"
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

DecodeAttention decode_moba_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  LayerContext& l = ctx.layer;
  const int n = static_cast<int>(gpus.size()), home = ctx.home;
  const double B = l.in.run.batch, blk = l.in.model.attention.moba_block;
  const double blocks = std::floor(ctx.context / blk);  // complete blocks cached before the token
  const int k = static_cast<int>(std::min(double(l.in.model.attention.moba_top_k_blocks), blocks));
  const std::vector<int> owners = selections_per_owner(k, n, home, l.in.cp.moba);
  DecodeAttention out{entry, std::nullopt, 0};
  TaskId chosen = add_kernel(l, gpus[home], "block gating", 0, gemm_cost(l, B, key_width(l), blocks), entry[home]);
  chosen = add_kernel(l, gpus[home], "top-k blocks", 0, topk_cost(l, B * blocks), {chosen});
  std::vector<TaskId> gathered = {chosen};
  for (int o = 0; o < n; ++o) {
    if (o == home || owners[o] == 0) continue;
    const TaskId request =
        l.graph.add_flow(gpus[home], gpus[o], B * owners[o] * kIndexBytes, Traffic::CP, "selected blocks", l.layer, 1);
    l.graph.depend(request, chosen);
    l.graph.depend_all(request, entry[o]);
    const TaskId kv = l.graph.add_flow(gpus[o], gpus[home], B * owners[o] * blk * kv_token_bytes(l), Traffic::CP,
                                       "moba block gather", l.layer, 1);
    l.graph.depend(kv, request);
    gathered.push_back(kv);
    out.pending[o].push_back(kv);
  }
  out.pending[home] = {add_kernel(l, gpus[home], "block attention", 2, decode_attention_cost(ctx, k * blk), gathered)};
  return out;
}

}  // namespace cpsim
