#include "workloads/decode.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/attention/registry.hpp"
#include "workloads/graph_builder.hpp"
#include "workloads/layer_repetition.hpp"
#include "workloads/nccl_collectives.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/roofline.hpp"

namespace cpsim {

int decode_layer_home(const WorkloadInputs& in, int layer, int step) {
  const AttentionKind kind = in.model.layer_kind(layer).front();  // the scenario checks a layer's kinds agree
  return decode_home_rank(find_mode(kind, in.cp.algorithm(kind))->decode_home, step, in.parallel.cp);
}

namespace {

// From a single GPU to another one, or to every rank; a step starts with the token id anywhere (no move).
bool hidden_moves(int from, int to) { return from >= 0 && from != to; }

}  // namespace

bool decode_hidden_moves_into(const WorkloadInputs& in, const LayerKinds& kinds) {
  if (in.parallel.cp == 1) return false;
  const int steps = std::min(in.run.new_tokens, in.parallel.cp);  // homes repeat every cp steps
  for (int l = 1; l < in.model.layers; ++l) {
    if (in.model.layer_kind(l) != kinds) continue;
    for (int step = 0; step < steps; ++step)
      if (hidden_moves(decode_layer_home(in, l - 1, step), decode_layer_home(in, l, step))) return true;
  }
  return false;
}

namespace {

class DecodeBuilder : GraphBuilder {
 public:
  DecodeBuilder(const WorkloadInputs& in, int gpu_count) : GraphBuilder(in, gpu_count), sh_(shard_shape(in)) {}

  // run.micro_batches m (Helix HOP-B, batch-wise overlap): m independent decode batches, interleaved per layer in
  // three stages (attention up to its CP communication, then merge + o_proj + TP all-reduce, then the FFN), so
  // one micro-batch's CP and TP traffic runs while the other's kernels occupy the (FIFO) stream.
  TaskGraph build() {
    const int mbs = in_.run.micro_batches;
    std::vector<RankTasks> ready(mbs, RankTasks(layout_.used_gpus()));
    for (int step = 0; step < in_.run.new_tokens; ++step) {
      std::vector<int> where(mbs, -2);  // the token's CP rank (-1: every rank; -2: only its id, at a step's start)
      // Layers repeat within a step (workloads/layer_repetition.hpp); steps do not: the context grows a token.
      LayerRepetition repetition(g_, in_.run.fast_path);
      for (int l = 0; l < in_.model.layers; ++l) {
        const int home = decode_layer_home(in_, l, step);
        const std::string key = layer_key(l, home, where.front());
        if (l > 0 && repetition.copy(key, ready)) {
          std::fill(where.begin(), where.end(), home);
          continue;
        }
        repetition.begin(key, ready);
        std::vector<Pending> pending;
        for (int mb = 0; mb < mbs; ++mb)
          pending.push_back(attention_start({l, step, mbs > 1 ? mb : -1}, home, where[mb], ready[mb]));
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = attention_finish(pending[mb]);
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = ffn(pending[mb], ready[mb]);
        repetition.end(ready);
        std::fill(where.begin(), where.end(), home);
      }
    }
    return finish();
  }

 private:
  double B() const { return in_.run.batch; }

  // All that building decode layer `index` of a step reads besides its input tasks: its kinds, FFN, the GPU it
  // runs on and where the token comes from (the step, hence the context, is the same for a step's layers).
  std::string layer_key(int index, int home, int where) const {
    const MoeSpec& moe = in_.model.moe;
    return fmt::format("{} moe {} home {} from {}", layer_kinds_name(in_.model.layer_kind(index)),
                       moe.experts > 0 && index >= moe.first_dense_layers, home, where);
  }

  KernelCost gemm(double k, double n, Dtype dt) const {
    const double flops = 2 * B() * k * n, bytes = (k * n + B() * k + B() * n) * dtype_bytes(dt);
    return {gemm_time_s(in_.gpu, dt, B(), n, k, bytes), flops, bytes};
  }
  TaskId compute(int gpu, const char* name, int layer, int step, const KernelCost& c, const std::vector<TaskId>& after) {
    const TaskId t = g_.add_compute(gpu, name, layer, step, c.duration_s, c.flops, c.hbm_bytes);
    g_.depend_all(t, after);
    return t;
  }
  bool at_home(int gpu, int home) const { return home < 0 || layout_.coord(gpu).cp == home; }

  // One micro-batch's layer after its attention kernels: the CP communication in flight, per GPU, and the merges
  // the home runs before its output projection.
  struct Pending {
    int layer, model_layer, home;
    RankTasks comm;
    std::vector<std::pair<KernelCost, int>> merges;  // cost, algorithm step
  };

  std::vector<CpAlgorithm> algorithms(const LayerKinds& kinds) const {
    std::vector<CpAlgorithm> out;
    for (AttentionKind kind : kinds) out.push_back(in_.cp.algorithm(kind));
    return out;
  }

  // The hidden state to the layer's home (per TP lane, within its CP group), then the QKV projection there and
  // each kind's decode attention.
  Pending attention_start(const LayerPlace& place, int home, int where, const RankTasks& ready) {
    const LayerKinds& kinds = in_.model.layer_kind(place.model_layer);
    const int layer = g_.add_layer(kinds, algorithms(kinds), false, place);
    Pending p{layer, place.model_layer, home, RankTasks(layout_.used_gpus()), {}};
    const double d = in_.model.d_model;
    const double context = double(in_.run.seq_len) + place.decode_step;
    for (int tp = 0; tp < in_.parallel.tp; ++tp) {
      const auto ring = layout_.cp_group(tp);
      const int n = static_cast<int>(ring.size());
      RankTasks entry(n);
      for (int r = 0; r < n; ++r) entry[r] = ready[ring[r]];
      if (hidden_moves(where, home))
        for (int r = 0; r < n; ++r) {
          if (r == where || (home >= 0 && r != home)) continue;
          const TaskId move = g_.add_flow(ring[where], ring[r], B() * d * sh_.activation_bytes, Traffic::CP,
                                          "decode hidden move", layer, -1);
          g_.depend_all(move, entry[where]);
          entry[r].push_back(move);
        }
      for (int r = 0; r < n; ++r)
        if (home < 0 || r == home)
          entry[r] = {compute(ring[r], "qkv_proj", layer, -1,
                              gemm(d, sh_.q_width() + 2 * sh_.kv_width(), in_.run.dtypes.projections), entry[r])};
      LayerContext lctx{g_, in_, sh_, layout_, layer};
      DecodeContext ctx{lctx, home, context};
      RankTasks attended(n);
      for (AttentionKind kind : kinds) {
        const DecodeAttention a = find_mode(kind, in_.cp.algorithm(kind))->decode(ctx, ring, entry);
        for (int r = 0; r < n; ++r) attended[r].insert(attended[r].end(), a.pending[r].begin(), a.pending[r].end());
        if (tp == 0 && a.merge) p.merges.push_back({*a.merge, a.merge_step});
      }
      for (int r = 0; r < n; ++r) {  // kinds side by side pass the same entry tasks through: keep each once
        std::sort(attended[r].begin(), attended[r].end());
        attended[r].erase(std::unique(attended[r].begin(), attended[r].end()), attended[r].end());
        p.comm[ring[r]] = attended[r];
      }
    }
    return p;
  }

  // The merge of the partials, then o_proj and its TP all-reduce where the hidden state lives.
  RankTasks attention_finish(const Pending& p) {
    const int gpus = layout_.used_gpus();
    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      if (!at_home(gpu, p.home)) {
        after_o[gpu] = p.comm[gpu];
        continue;
      }
      std::vector<TaskId> after = p.comm[gpu];
      for (const auto& [cost, step] : p.merges) after = {compute(gpu, "merge partials", p.layer, step, cost, after)};
      after_o[gpu] = {compute(gpu, "o_proj", p.layer, -1, gemm(sh_.q_width(), in_.model.d_model, in_.run.dtypes.projections),
                              after)};
    }
    return tp_allreduce(p.layer, after_o, p.home, "tp allreduce attn");
  }

  // The FFN where the token lives: a dense FFN, or top_k routed + shared experts on MoE layers (in decode the
  // experts run on the token's GPUs; EP dispatch is not modelled in decode).
  RankTasks ffn(const Pending& p, const RankTasks& after_o) {
    const int gpus = layout_.used_gpus();
    const MoeSpec& moe = in_.model.moe;
    const bool moe_layer = moe.experts > 0 && p.model_layer >= moe.first_dense_layers;
    const double d = in_.model.d_model;
    const double width =
        (moe_layer ? double(moe.top_k + moe.shared_experts) * moe.expert_ffn_dim : double(in_.model.ffn_dim)) /
        in_.parallel.tp;
    RankTasks after_ffn(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      if (!at_home(gpu, p.home)) {
        after_ffn[gpu] = after_o[gpu];
        continue;
      }
      const KernelCost up = gemm(d, 2 * width, in_.run.dtypes.ffn), down = gemm(width, d, in_.run.dtypes.ffn);
      after_ffn[gpu] = {compute(gpu, "ffn", p.layer, -1,
                                {up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes},
                                after_o[gpu])};
    }
    return tp_allreduce(p.layer, after_ffn, p.home, "tp allreduce ffn");
  }

  RankTasks tp_allreduce(int layer, const RankTasks& ready, int home, const char* name) {
    if (in_.parallel.tp == 1) return ready;
    RankTasks out = ready;
    for (int c = 0; c < in_.parallel.cp; ++c) {
      if (home >= 0 && c != home) continue;
      const auto group = layout_.tp_group(c);
      RankTasks group_ready;
      for (int gpu : group) group_ready.push_back(ready[gpu]);
      const RankTasks done = allreduce(g_, group, B() * in_.model.d_model * sh_.activation_bytes, {Traffic::TP, name, layer}, group_ready);
      for (std::size_t i = 0; i < group.size(); ++i) out[group[i]] = done[i];
    }
    return out;
  }

  ShardShape sh_;
};

}  // namespace

// Serving stacks capture a decode step in a CUDA graph (Meta's CP decode, vLLM, SGLang): its kernels pay the
// graph replay cost per kernel instead of a host launch.
TaskGraph generate_decode(const WorkloadInputs& in, int gpu_count) {
  GpuSpec graphed = in.gpu;
  graphed.kernels.launch_overhead_s = graphed.kernels.graph_launch_overhead_s;
  const WorkloadInputs replayed{in.model, in.run, in.parallel, in.cp, graphed, in.platform, in.symmetry};
  return DecodeBuilder(replayed, gpu_count).build();
}

}  // namespace cpsim
