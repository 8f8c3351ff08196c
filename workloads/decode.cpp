#include "workloads/decode.hpp"

#include <optional>


#include "workloads/graph_builder.hpp"
#include "workloads/nccl_collectives.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/roofline.hpp"

namespace cpsim {
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
    for (int step = 0; step < in_.run.new_tokens; ++step)
      for (int l = 0; l < in_.model.layers; ++l) {
        std::vector<Pending> pending;
        for (int mb = 0; mb < mbs; ++mb) pending.push_back(attention_start({l, step, mbs > 1 ? mb : -1}, ready[mb]));
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = attention_finish(step, pending[mb]);
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = ffn(step, pending[mb].layer, ready[mb]);
      }
    return finish();
  }

 private:
  double B() const { return in_.run.batch; }
  double s() const { return sh_.dtype_bytes; }

  KernelCost gemm(double k, double n, Dtype dt) const {
    const double flops = 2 * B() * k * n, bytes = (k * n + B() * k + B() * n) * dtype_bytes(dt);
    return {gemm_time_s(in_.gpu, dt, B(), n, k, bytes), flops, bytes};
  }
  // Partial attention of the B new queries over `kv_tokens` cached tokens per sequence (memory-bound: the KV read).
  KernelCost partial_attention(double kv_tokens) const {
    const double flops = 4 * B() * kv_tokens * sh_.q_heads * sh_.head_dim;
    const double bytes = B() * kv_tokens * 2 * sh_.kv_width() * sh_.kv_bytes + 2 * B() * sh_.q_width() * s();
    const AttentionShape shape{1, kv_tokens, double(sh_.q_heads), B(), Mask::FULL, double(sh_.q_heads) / sh_.kv_heads};
    return {attention_time_s(in_.gpu, in_.run.dtypes.attention, shape, flops, bytes), flops, bytes};
  }
  TaskId compute(int gpu, const char* name, int layer, int step, const KernelCost& c, const std::vector<TaskId>& after) {
    const TaskId t = g_.add_compute(gpu, name, layer, step, c.duration_s, c.flops, c.hbm_bytes);
    g_.depend_all(t, after);
    return t;
  }

  bool tree() const { return in_.cp.dense.algorithm == CpAlgorithm::TREE; }

  // One micro-batch's layer after its attention kernels: the CP communication in flight, per GPU.
  struct Pending {
    int layer;
    RankTasks comm;
  };

  Pending attention_start(const LayerPlace& place, const RankTasks& ready) {
    const int step = place.decode_step;
    const int layer = g_.add_layer({AttentionKind::DENSE}, {in_.cp.dense.algorithm}, false, place);
    const int owner = step % in_.parallel.cp;  // pass-q: the CP rank holding this step's token
    RankTasks out(layout_.used_gpus());
    for (int tp = 0; tp < in_.parallel.tp; ++tp) {
      const auto ring = layout_.cp_group(tp);
      const int n = static_cast<int>(ring.size());
      RankTasks entry(n);
      for (int r = 0; r < n; ++r) entry[r] = ready[ring[r]];
      const RankTasks attended = tree() ? tree_layer(layer, ring, entry) : pass_q_layer(layer, ring, entry, owner);
      for (int r = 0; r < n; ++r) out[ring[r]] = attended[r];
    }
    return {layer, out};
  }

  // The merge of the partials, then o_proj and its TP all-reduce where the hidden state lives (every rank for
  // tree, the owner for pass-q).
  RankTasks attention_finish(int step, const Pending& p) {
    const int layer = p.layer, gpus = layout_.used_gpus(), owner = step % in_.parallel.cp;
    const double d = in_.model.d_model, heads = B() * sh_.q_heads;
    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      const bool home = tree() || layout_.coord(gpu).cp == owner;
      if (!home) {
        after_o[gpu] = p.comm[gpu];
        continue;
      }
      const double merge_bytes = tree() ? 0 : in_.parallel.cp * heads * (sh_.head_dim * s() + 4);
      const TaskId merge = compute(gpu, "merge partials", layer, tree() ? 1 : in_.parallel.cp,
                                   {kernel_time_s(in_.gpu, KernelClass::MEMORY, in_.run.dtype, 0, merge_bytes), 0,
                                    merge_bytes},
                                   p.comm[gpu]);
      after_o[gpu] = {compute(gpu, "o_proj", layer, -1, gemm(sh_.q_width(), d, in_.run.dtypes.projections), {merge})};
    }
    return tp_allreduce(layer, after_o, owner, tree(), "tp allreduce attn");
  }

  RankTasks ffn(int step, int layer, const RankTasks& after_o) {
    const int gpus = layout_.used_gpus(), owner = step % in_.parallel.cp;
    const bool tree = this->tree();
    const double d = in_.model.d_model, width = double(in_.model.ffn_dim) / in_.parallel.tp;
    RankTasks after_ffn(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      if (!tree && layout_.coord(gpu).cp != owner) {
        after_ffn[gpu] = after_o[gpu];
        continue;
      }
      const KernelCost up = gemm(d, 2 * width, in_.run.dtypes.ffn), down = gemm(width, d, in_.run.dtypes.ffn);
      after_ffn[gpu] = {compute(gpu, "ffn", layer, -1,
                                {up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes},
                                after_o[gpu])};
    }
    return tp_allreduce(layer, after_ffn, owner, tree, "tp allreduce ffn");
  }

  RankTasks tp_allreduce(int layer, const RankTasks& ready, int owner, bool tree, const char* name) {
    if (in_.parallel.tp == 1) return ready;
    RankTasks out = ready;
    for (int c = 0; c < in_.parallel.cp; ++c) {
      if (!tree && c != owner) continue;
      const auto group = layout_.tp_group(c);
      RankTasks group_ready;
      for (int gpu : group) group_ready.push_back(ready[gpu]);
      const RankTasks done = allreduce(g_, group, B() * in_.model.d_model * sh_.activation_bytes, {Traffic::TP, name, layer}, group_ready);
      for (std::size_t i = 0; i < group.size(); ++i) out[group[i]] = done[i];
    }
    return out;
  }

  RankTasks tree_layer(int layer, const std::vector<int>& ring, const RankTasks& entry) {
    const int n = static_cast<int>(ring.size());
    const double shard = double(in_.run.seq_len) / n, d = in_.model.d_model;
    RankTasks partial(n);
    for (int r = 0; r < n; ++r) {
      const TaskId qkv = compute(ring[r], "qkv_proj", layer, -1, gemm(d, sh_.q_width() + 2 * sh_.kv_width(), in_.run.dtypes.projections), entry[r]);
      partial[r] = {compute(ring[r], "partial attention", layer, 0, partial_attention(shard), {qkv})};
    }
    // The three softmax partials merge with an associative operator, so one tree carries them level by level.
    const double heads = B() * sh_.q_heads;
    RankTasks done(n);
    for (const auto& [name, bytes] : {std::pair<const char*, double>{"tree max", heads * 4},
                                      {"tree sum", heads * 4},
                                      {"tree numerator", heads * sh_.head_dim * s()}}) {
      const RankTasks reduced = tree_allreduce(g_, ring, bytes, {Traffic::CP, name, layer}, partial);
      for (int r = 0; r < n; ++r) done[r].insert(done[r].end(), reduced[r].begin(), reduced[r].end());
    }
    return done;  // merged in attention_finish
  }

  // Pass-Q as Meta runs it: the token's Q hops on as soon as it arrived (the hop does not wait for the partial
  // attention), every rank keeps its partial (O, LSE), and after the last hop one all-to-all (only the owner
  // receives: N-1 partials, one per pairwise step) returns them to the owner, which merges.
  RankTasks pass_q_layer(int layer, const std::vector<int>& ring, const RankTasks& entry, int owner) {
    const int n = static_cast<int>(ring.size());
    const double shard = double(in_.run.seq_len) / n, d = in_.model.d_model;
    const double q_bytes = B() * sh_.q_width() * s(), partial_bytes = B() * sh_.q_heads * (sh_.head_dim * s() + 4);
    RankTasks done = entry;
    const TaskId qkv = compute(ring[owner], "qkv_proj", layer, -1, gemm(d, sh_.q_width() + 2 * sh_.kv_width(), in_.run.dtypes.projections), entry[owner]);
    done[owner] = {compute(ring[owner], "partial attention", layer, 0, partial_attention(shard), {qkv})};
    TaskId q_here = qkv;  // the Q arrived at the current rank
    for (int k = 1; k < n; ++k) {
      const int from = (owner + k - 1) % n, to = (owner + k) % n;
      const TaskId hop = g_.add_flow(ring[from], ring[to], q_bytes, Traffic::CP, "pass-q q", layer, k);
      g_.depend(hop, q_here);
      g_.depend_all(hop, entry[to]);
      done[to] = {compute(ring[to], "partial attention", layer, k, partial_attention(shard), {hop})};
      done[from].push_back(hop);
      q_here = hop;
    }
    std::vector<std::vector<double>> bytes(n, std::vector<double>(n, 0));
    for (int r = 0; r < n; ++r)
      if (r != owner) bytes[r][owner] = partial_bytes;
    return alltoallv(g_, ring, bytes, {Traffic::CP, "pass-q partial out", layer}, done);  // merged later
  }

  ShardShape sh_;
};

}  // namespace

// Serving stacks capture a decode step in a CUDA graph (Meta's CP decode, vLLM, SGLang): its kernels pay the
// graph replay cost per kernel instead of a host launch.
TaskGraph generate_decode(const WorkloadInputs& in, int gpu_count) {
  GpuSpec graphed = in.gpu;
  graphed.kernels.launch_overhead_s = graphed.kernels.graph_launch_overhead_s;
  const WorkloadInputs replayed{in.model, in.run, in.parallel, in.cp, graphed, in.platform};
  return DecodeBuilder(replayed, gpu_count).build();
}

}  // namespace cpsim
