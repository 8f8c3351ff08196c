#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

RankTasks for_each_cp_group(LayerContext& ctx, const RankTasks& entry, const GroupLowering& lower) {
  RankTasks out(entry.size());
  for (int tp = 0; tp < ctx.in.parallel.tp; ++tp) {
    const auto gpus = ctx.layout.cp_group(tp);
    RankTasks group_entry;
    for (int gpu : gpus) group_entry.push_back(entry[gpu]);
    const RankTasks done = lower(gpus, group_entry);
    for (std::size_t i = 0; i < gpus.size(); ++i) out[gpus[i]] = done[i];
  }
  return out;
}

RankTasks gather_then_attend(LayerContext& ctx, const std::vector<int>& gpus,
                             const std::vector<std::vector<int>>& owners, double bytes_per_selection,
                             const char* flow_name, const RankTasks& ready, const RankTasks& owner_ready,
                             RankTasks done, const char* attention_name, const KernelCost& attention) {
  const int n = static_cast<int>(gpus.size());
  for (int q = 0; q < n; ++q) {
    std::vector<TaskId> after = ready[q];
    for (int o = 0; o < n; ++o) {
      if (o == q || owners[q][o] == 0) continue;
      const TaskId f = ctx.graph.add_flow(gpus[o], gpus[q], owners[q][o] * bytes_per_selection, Traffic::CP,
                                          flow_name, ctx.layer, 2);
      ctx.graph.depend_all(f, ready[q]);
      ctx.graph.depend_all(f, owner_ready[o]);
      after.push_back(f);
      done[o].push_back(f);  // the owner serves the gather
    }
    done[q].push_back(add_kernel(ctx, gpus[q], attention_name, 3, attention, after));
  }
  return done;
}

double kv_token_bytes(const LayerContext& ctx) {
  const double width = ctx.in.model.mla.d_c > 0 ? ctx.in.model.mla.d_c : ctx.shape.kv_width();
  return 2 * width * ctx.shape.kv_bytes;
}

double key_width(const LayerContext& ctx) {
  return ctx.in.model.mla.d_c > 0 ? ctx.in.model.mla.d_c : ctx.shape.kv_width();
}

TaskId add_kernel(LayerContext& ctx, int gpu, const char* name, int step, const KernelCost& cost,
                  const std::vector<TaskId>& deps) {
  const double f = ctx.backward_scale;  // a forward lowering replayed as its backward pass
  const std::string label = f > 1 ? std::string(name) + " backward" : std::string(name);
  const TaskId t = ctx.graph.add_compute(gpu, label, ctx.layer, step, cost.duration_s * f, cost.flops * f, cost.hbm_bytes * f);
  ctx.graph.depend_all(t, deps);
  return t;
}

KernelCost attention_pairs_cost(const LayerContext& ctx, double pairs, double q_tokens, double kv_tokens) {
  const ShardShape& sh = ctx.shape;
  const double flops = 4 * pairs * sh.q_heads * sh.head_dim;
  const double bytes = 2 * q_tokens * sh.q_width() * sh.dtype_bytes + kv_tokens * kv_token_bytes(ctx);
  // Masks here are bands, selections or small triangles (SWA, sparse, MoBA, intra-chunk): a kernel that skips
  // invisible tiles, priced as a non-causal call over the mean visible keys per query.
  const double batch = ctx.in.run.batch;
  const double q_per_seq = q_tokens / batch, visible = q_tokens > 0 ? pairs / q_tokens : 0;
  const AttentionShape shape{q_per_seq, visible, double(sh.q_heads), batch, Mask::FULL,
                             double(sh.q_heads) / sh.kv_heads};
  return {attention_time_s(ctx.in.gpu, ctx.in.run.dtypes.attention, shape, flops, bytes), flops, bytes};
}

KernelCost indexer_cost(const LayerContext& ctx, double pairs) {
  const AttentionSpec& a = ctx.in.model.attention;
  const double flops = 2 * pairs * a.indexer_heads * a.indexer_dim;
  const double bytes = pairs * 4;  // fp32 scores written once
  return {kernel_time_s(ctx.in.gpu, KernelClass::ATTENTION, Dtype::FP8, flops, bytes), flops, bytes};
}

KernelCost gemm_cost(const LayerContext& ctx, double m, double k, double n) {
  const double s = ctx.shape.dtype_bytes;
  const double flops = 2 * m * k * n, bytes = (m * k + k * n + m * n) * s;
  return {gemm_time_s(ctx.in.gpu, ctx.in.run.dtype, m, n, k, bytes), flops, bytes};
}

KernelCost compressor_cost(const LayerContext& ctx, double tokens) {
  return gemm_cost(ctx, tokens, ctx.in.model.d_model, kv_token_bytes(ctx) / ctx.shape.dtype_bytes);
}

KernelCost topk_cost(const LayerContext& ctx, double scores) { return memory_pass_cost(ctx, scores * 4); }

KernelCost memory_pass_cost(const LayerContext& ctx, double bytes) {
  return {memory_time_s(ctx.in.gpu, bytes), 0, bytes};
}

}  // namespace cpsim
