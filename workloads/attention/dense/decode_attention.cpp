// Dense decode under CP (cp-overview.md, decode CP): the KV cache is sharded S/N per rank and the step's token
// queries every shard.
//   tree    every rank holds the token (its projections and FFN replicated), attends its shard, and one tree
//           all-reduce per softmax partial (max, sum, numerator) merges them level by level.
//   pass-q  Meta's pass-Q: the token lives on the rank step mod N (the KV is appended round-robin); its Q hops on
//           as soon as it arrived (the hop does not wait for the partial attention), every rank keeps its partial
//           (O, LSE), and after the last hop one all-to-all (only the owner receives: N-1 partials) returns them.
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

// Partial attention of the B new queries over a rank's `kv_tokens` cached tokens per sequence (memory-bound: the
// K and V read).
KernelCost partial_attention(const LayerContext& ctx, double kv_tokens) {
  const ShardShape& sh = ctx.shape;
  const double B = ctx.in.run.batch;
  const double flops = 4 * B * kv_tokens * sh.q_heads * sh.head_dim;
  const double bytes = B * kv_tokens * 2 * sh.kv_width() * sh.kv_bytes + 2 * B * sh.q_width() * sh.dtype_bytes;
  const AttentionShape shape{1, kv_tokens, double(sh.q_heads), B, Mask::FULL, double(sh.q_heads) / sh.kv_heads};
  return {attention_time_s(ctx.in.gpu, ctx.in.run.dtypes.attention, shape, flops, bytes), flops, bytes};
}

double shard_tokens(const DecodeContext& ctx, int n) { return double(ctx.layer.in.run.seq_len) / n; }
double softmax_heads(const DecodeContext& ctx) { return ctx.layer.in.run.batch * ctx.layer.shape.q_heads; }

}  // namespace

DecodeAttention decode_dense_tree(DecodeContext& ctx, const std::vector<int>& ring, const RankTasks& entry) {
  const int n = static_cast<int>(ring.size());
  RankTasks partial(n);
  for (int r = 0; r < n; ++r)
    partial[r] = {add_kernel(ctx.layer, ring[r], "partial attention", 0, partial_attention(ctx.layer, shard_tokens(ctx, n)),
                             entry[r])};
  // The three softmax partials merge with an associative operator, so one tree carries them level by level.
  const double heads = softmax_heads(ctx), s = ctx.layer.shape.dtype_bytes;
  DecodeAttention out{RankTasks(n), KernelCost{0, 0, 0}, 1};
  for (const auto& [name, bytes] : {std::pair<const char*, double>{"tree max", heads * 4},
                                    {"tree sum", heads * 4},
                                    {"tree numerator", heads * ctx.layer.shape.head_dim * s}}) {
    const RankTasks reduced = tree_allreduce(ctx.layer.graph, ring, bytes, {Traffic::CP, name, ctx.layer.layer}, partial);
    for (int r = 0; r < n; ++r) out.pending[r].insert(out.pending[r].end(), reduced[r].begin(), reduced[r].end());
  }
  out.merge = KernelCost{kernel_time_s(ctx.layer.in.gpu, KernelClass::MEMORY, ctx.layer.in.run.dtype, 0, 0), 0, 0};
  return out;
}

DecodeAttention decode_dense_pass_q(DecodeContext& ctx, const std::vector<int>& ring, const RankTasks& entry) {
  const int n = static_cast<int>(ring.size()), owner = ctx.home;
  const ShardShape& sh = ctx.layer.shape;
  const double B = ctx.layer.in.run.batch, s = sh.dtype_bytes;
  const double q_bytes = B * sh.q_width() * s, partial_bytes = softmax_heads(ctx) * (sh.head_dim * s + 4);
  const KernelCost attention = partial_attention(ctx.layer, shard_tokens(ctx, n));
  RankTasks done = entry;
  done[owner] = {add_kernel(ctx.layer, ring[owner], "partial attention", 0, attention, entry[owner])};
  std::vector<TaskId> q_here = entry[owner];  // the Q arrived at the current rank
  for (int k = 1; k < n; ++k) {
    const int from = (owner + k - 1) % n, to = (owner + k) % n;
    const TaskId hop = ctx.layer.graph.add_flow(ring[from], ring[to], q_bytes, Traffic::CP, "pass-q q", ctx.layer.layer, k);
    ctx.layer.graph.depend_all(hop, q_here);
    ctx.layer.graph.depend_all(hop, entry[to]);
    done[to] = {add_kernel(ctx.layer, ring[to], "partial attention", k, attention, {hop})};
    done[from].push_back(hop);
    q_here = {hop};
  }
  std::vector<std::vector<double>> bytes(n, std::vector<double>(n, 0));
  for (int r = 0; r < n; ++r)
    if (r != owner) bytes[r][owner] = partial_bytes;
  DecodeAttention out;
  out.pending = alltoallv(ctx.layer.graph, ring, bytes, {Traffic::CP, "pass-q partial out", ctx.layer.layer}, done);
  const double merge_bytes = n * partial_bytes;
  out.merge = KernelCost{kernel_time_s(ctx.layer.in.gpu, KernelClass::MEMORY, ctx.layer.in.run.dtype, 0, merge_bytes), 0,
                         merge_bytes};
  out.merge_step = n;
  return out;
}

}  // namespace cpsim
