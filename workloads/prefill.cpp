#include "workloads/prefill.hpp"

#include <algorithm>

#include "workloads/attention_lowering.hpp"
#include "workloads/partition.hpp"

namespace cpsim {

ShardShape shard_shape(const WorkloadInputs& in) {
  ShardShape s;
  s.tokens = double(in.run.batch) * double(tokens_per_rank(in.run.seq_len, in.parallel.cp));
  s.q_heads = in.model.n_heads / in.parallel.tp;
  s.kv_heads = std::max(1, in.model.n_kv_heads / in.parallel.tp);
  s.head_dim = in.model.head_dim;
  s.dtype_bytes = dtype_bytes(in.run.dtype);
  return s;
}

namespace {

// A dense GEMM of a [tokens x k] activation with a [k x n] weight shard: 2*tokens*k*n flops; reads the weight and
// the input, writes the output.
KernelCost gemm(const WorkloadInputs& in, double tokens, double k, double n) {
  const double s = dtype_bytes(in.run.dtype);
  const double flops = 2 * tokens * k * n;
  const double bytes = (k * n + tokens * k + tokens * n) * s;
  return {kernel_time_s(in.gpu, KernelClass::GEMM, in.run.dtype, flops, bytes), flops, bytes};
}

class PrefillBuilder {
 public:
  PrefillBuilder(const WorkloadInputs& in, int gpu_count)
      : in_(in), shape_(shard_shape(in)), layout_(in.parallel), g_(gpu_count) {}

  TaskGraph build() {
    // Micro-batches (run.micro_batches, DualPipe-style): independent chains interleaved layer by layer, so one
    // micro-batch's TP/EP collectives can run while the next one's attention moves CP traffic.
    const int mbs = in_.run.micro_batches;
    std::vector<RankTasks> ready(mbs, RankTasks(layout_.used_gpus()));  // per GPU: what the next layer waits for
    for (int l = 0; l < in_.model.layers; ++l) {
      // Every micro-batch's attention half, then every FFN half: one's collectives overlap the next one's kernels.
      std::vector<AttentionHalf> halves;
      for (int mb = 0; mb < mbs; ++mb) halves.push_back(attention_half(l, ready[mb]));
      for (int mb = 0; mb < mbs; ++mb) ready[mb] = ffn_half(l, halves[mb].layer, halves[mb].done);
      if (l == 0) g_.reserve(g_.tasks().size() * in_.model.layers, g_.dependency_count() * in_.model.layers);
    }
    if (in_.run.phase == "train")  // training: the backward pass, last layer first
      for (int l = in_.model.layers - 1; l >= 0; --l)
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = layer_backward(l, ready[mb]);
    return std::move(g_);
  }

 private:
  TaskId compute(int gpu, const char* name, int layer, const KernelCost& c, const std::vector<TaskId>& after) {
    const TaskId t = g_.add_compute(gpu, name, layer, -1, c.duration_s, c.flops, c.hbm_bytes);
    g_.depend_all(t, after);
    return t;
  }

  // Runs `collective` on every TP group (GPUs in TP-rank order) and scatters its per-rank results back.
  template <class Collective>
  RankTasks per_tp_group(const RankTasks& ready, Collective collective) {
    RankTasks out(ready.size());
    for (int c = 0; c < in_.parallel.cp; ++c) {
      const auto group = layout_.tp_group(c);
      RankTasks group_ready;
      for (int gpu : group) group_ready.push_back(ready[gpu]);
      const RankTasks done = collective(group, group_ready);
      for (std::size_t i = 0; i < group.size(); ++i) out[group[i]] = done[i];
    }
    return out;
  }

  // Per-GPU completion sets of a TP all-reduce of `bytes` per rank, for every TP group.
  RankTasks tp_allreduce(int layer, double bytes, const RankTasks& ready, const char* name) {
    if (in_.parallel.tp == 1) return ready;
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return ring_allreduce(g_, group, bytes, {Traffic::TP, name, layer}, group_ready);
    });
  }

  // EP all-to-all inside every TP group (uniform routing): each GPU routes its 1/ep share of the tokens, top_k
  // copies each, spread evenly over the ep GPUs: T/ep * top_k/ep * d_model * s to every peer.
  RankTasks expert_alltoall(int layer, const RankTasks& ready, const char* name) {
    const int ep = in_.parallel.ep;
    const double pair_bytes = shape_.tokens / ep * double(in_.model.moe.top_k) / ep * in_.model.d_model * shape_.dtype_bytes;
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return pairwise_alltoall(g_, group, pair_bytes, {Traffic::EP, name, layer}, group_ready);
    });
  }

  static KernelCost twice(const KernelCost& c) { return {2 * c.duration_s, 2 * c.flops, 2 * c.hbm_bytes}; }

  // Backward of one dense layer: FFN and projections cost twice their forward GEMMs (input and weight gradients),
  // the attention backward follows the CP algorithm (train_attention.cpp), TP all-reduces mirror the forward.
  RankTasks layer_backward(int index, const RankTasks& ready) {
    const int layer = g_.add_layer(in_.model.layer_kind(index), in_.cp.dense.algorithm + "-backward");
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.dtype_bytes;
    const double ffn = double(in_.model.ffn_dim) / in_.parallel.tp;
    RankTasks after_ffn(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      KernelCost up = gemm(in_, t, d, 2 * ffn), down = gemm(in_, t, ffn, d);
      after_ffn[gpu] = {compute(gpu, "ffn backward", layer,
                                twice({up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes}),
                                ready[gpu])};
    }
    const RankTasks after_ar = tp_allreduce(layer, t * d * s, after_ffn, "tp allreduce ffn backward");
    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_o[gpu] = {compute(gpu, "o_proj backward", layer, twice(gemm(in_, t, shape_.q_width(), d)), after_ar[gpu])};
    LayerContext ctx{g_, in_, shape_, layout_, layer};
    const RankTasks after_attn = lower_dense_backward(ctx, after_o);
    RankTasks after_qkv(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_qkv[gpu] = {compute(gpu, "qkv_proj backward", layer,
                                twice(gemm(in_, t, d, shape_.q_width() + 2 * shape_.kv_width())), after_attn[gpu])};
    return tp_allreduce(layer, t * d * s, after_qkv, "tp allreduce attn backward");
  }

  struct AttentionHalf {
    int layer;
    RankTasks done;
  };

  RankTasks layer(int index, const RankTasks& ready) {
    const AttentionHalf a = attention_half(index, ready);
    return ffn_half(index, a.layer, a.done);
  }

  // The attention half of layer `index`: QKV, the CP attention lowering(s), the output projection, TP all-reduce.
  AttentionHalf attention_half(int index, const RankTasks& ready) {
    // A layer's kind may join several attention kinds computed side by side ("swa+csa"); each has its algorithm.
    const std::string& kind = in_.model.layer_kind(index);
    const std::vector<std::string> parts = split_layer_kind(kind);
    std::string algorithms;
    for (const auto& part : parts) algorithms += (algorithms.empty() ? "" : "+") + in_.cp.algorithm(part);
    const int layer = g_.add_layer(kind, algorithms);
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.dtype_bytes;
    RankTasks after_qkv(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_qkv[gpu] = {compute(gpu, "qkv_proj", layer, gemm(in_, t, d, shape_.q_width() + 2 * shape_.kv_width()),
                                ready[gpu])};

    LayerContext ctx{g_, in_, shape_, layout_, layer};
    RankTasks after_attn(gpus);
    for (const auto& part : parts) {
      const RankTasks done = find_lowering(part, in_.cp.algorithm(part))(ctx, after_qkv);
      for (int gpu = 0; gpu < gpus; ++gpu) after_attn[gpu].insert(after_attn[gpu].end(), done[gpu].begin(), done[gpu].end());
    }

    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_o[gpu] = {compute(gpu, "o_proj", layer, gemm(in_, t, shape_.q_width(), d), after_attn[gpu])};
    return {layer, tp_allreduce(layer, t * d * s, after_o, "tp allreduce attn")};
  }

  // The FFN half of layer `index` (registered as `layer`): the dense or MoE FFN, EP all-to-alls, TP all-reduce.
  RankTasks ffn_half(int index, int layer, const RankTasks& after_ar1) {
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.dtype_bytes;

    RankTasks after_ffn(gpus);
    // MoE layers run top_k routed + shared experts per token. With parallel.ep = tp the experts are spread over
    // the TP group: an all-to-all dispatches the tokens to their experts' GPUs and another combines the results.
    const MoeSpec& moe = in_.model.moe;
    const bool moe_layer = moe.experts > 0 && index >= moe.first_dense_layers;
    const double ffn =
        (moe_layer ? double(moe.top_k + moe.shared_experts) * moe.expert_ffn_dim : double(in_.model.ffn_dim)) /
        in_.parallel.tp;
    const bool ep = moe_layer && in_.parallel.ep > 1;
    const RankTasks ffn_in = ep ? expert_alltoall(layer, after_ar1, "ep dispatch") : after_ar1;
    for (int gpu = 0; gpu < gpus; ++gpu) {
      KernelCost up = gemm(in_, t, d, 2 * ffn), down = gemm(in_, t, ffn, d);
      KernelCost both{up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes};
      after_ffn[gpu] = {compute(gpu, "ffn", layer, both, ffn_in[gpu])};
    }
    if (ep) after_ffn = expert_alltoall(layer, after_ffn, "ep combine");
    return tp_allreduce(layer, t * d * s, after_ffn, "tp allreduce ffn");
  }

  const WorkloadInputs& in_;
  ShardShape shape_;
  RankLayout layout_;
  TaskGraph g_;
};

}  // namespace

TaskGraph generate_prefill(const WorkloadInputs& in, int gpu_count) {
  return PrefillBuilder(in, gpu_count).build();
}

}  // namespace cpsim
