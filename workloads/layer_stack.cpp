#include "workloads/layer_stack.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <optional>

#include "sim/scenario/units.hpp"
#include "workloads/attention/registry.hpp"
#include "workloads/expert_routing.hpp"
#include "workloads/gradient_sync.hpp"
#include "workloads/graph_builder.hpp"
#include "workloads/layer_repetition.hpp"
#include "workloads/nccl_collectives.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/relayout.hpp"
#include "workloads/attention/partition.hpp"
#include "workloads/tp_comm_overlap.hpp"

namespace cpsim {

namespace {

// A dense GEMM of a [tokens x k] activation with a [k x n] weight shard: 2*tokens*k*n flops; reads the weight and
// the input, writes the output, all in `dt` (run.dtypes.projections or .ffn).
KernelCost gemm(const WorkloadInputs& in, double tokens, double k, double n, Dtype dt) {
  const double s = dtype_bytes(dt);
  const double flops = 2 * tokens * k * n;
  const double bytes = (k * n + tokens * k + tokens * n) * s;
  return {gemm_time_s(in.gpu, dt, tokens, n, k, bytes), flops, bytes};
}

class LayerStackBuilder : GraphBuilder {
 public:
  LayerStackBuilder(const WorkloadInputs& in, int gpu_count)
      : GraphBuilder(in, gpu_count), shape_(shard_shape(in)), routing_(expert_routing(in.parallel)) {}

  TaskGraph build() {
    std::vector<LayerGradients> grads(in_.model.layers);
    if (in_.parallel.pp > 1) build_pipeline(grads);
    else build_one_stage(grads);
    if (in_.run.phase == Phase::TRAIN) {
      const std::size_t replica_tasks = g_.task_count();
      g_.replicate(in_.parallel.simulated_dp, layout_.replica_stride());
      if (in_.parallel.grad_sync != GradSync::NONE) add_gradient_sync(g_, in_, layout_, grads, replica_tasks);
    }
    return finish();
  }

 private:
  // Refuses a graph that would pass run.max_tasks, from the tasks built so far (its first layer or pipeline pass)
  // times `parts`, before it exhausts memory (`what` says how the estimate was made); reserves room for the rest.
  void check_size(double parts, const std::string& what) {
    const double estimate = double(g_.task_count()) * parts * std::max(1, in_.parallel.simulated_dp);
    const std::string memory = format_bytes(estimate * kPeakBytesPerTask);
    if (estimate > double(g_.task_limit()))
      throw WorkloadTooLarge(fmt::format("about {:.3g} tasks ({}, ~{} of memory), past the limit of {} (run.max_tasks, "
                                         "or --max-tasks)", estimate, what, memory, g_.task_limit()));
    if (estimate > 1e6)  // layers copied (TaskGraph::repeat) are not stored: then far less
      spdlog::info("workload: building about {:.3g} tasks (up to ~{} of memory)", estimate, memory);
    // With layer repetition only the layers that differ are stored (TaskGraph::repeat): nothing to make room for.
    if (!in_.run.fast_path)
      g_.reserve(std::size_t(double(g_.task_count()) * parts), std::size_t(double(g_.dependency_count()) * parts));
  }

  // Training: a forward, a backward of about twice the tasks, and a forward replay under full recomputation.
  double passes_per_forward() const {
    return in_.run.phase != Phase::TRAIN ? 1 : in_.run.recompute == Recompute::FULL ? 4 : 3;
  }

  // Pipeline stages (parallel.pp > 1, workloads/pipeline_schedule.hpp): each stage runs its passes in the
  // schedule's order on its own CP x TP GPUs (tasks built on replica-local GPU numbers, shifted to the stage). A
  // forward pass waits for the previous chunk's activations, a backward pass for the next chunk's gradients (the
  // last chunk's for its own forward: the loss), each sent point-to-point by every GPU to its peer of the same CP
  // and TP rank in the receiving stage: T x d_model activations, T/tp of them with sequence parallelism (Megatron
  // sends the shard each rank holds).
  void build_pipeline(std::vector<LayerGradients>& grads) {
    const PipelinePlan plan = pipeline_plan(in_.model, in_.run, in_.parallel);
    const int gpus = layout_.used_gpus(), stages = plan.stages(), last_chunk = plan.chunks() - 1;
    const bool sp = in_.parallel.sequence_parallel && in_.parallel.tp > 1;
    const double p2p_bytes = shape_.tokens * in_.model.d_model * shape_.activation_bytes / (sp ? in_.parallel.tp : 1);
    std::map<std::tuple<bool, int, int>, RankTasks> arrived;  // (backward, micro-batch, chunk) -> its input, delivered
    std::size_t remaining = 0;
    for (int s = 0; s < stages; ++s) remaining += plan.passes(s).size();
    std::vector<std::size_t> next(stages, 0);
    const RankTasks nothing(gpus);
    while (remaining > 0) {
      bool progress = false;
      for (int s = 0; s < stages; ++s) {
        for (; next[s] < plan.passes(s).size(); ++next[s], --remaining, progress = true) {
          const PipelinePass& pass = plan.passes(s)[next[s]];
          const bool first = !pass.backward && pass.chunk == 0;
          const auto input = arrived.find({pass.backward, pass.micro_batch, pass.chunk});
          if (!first && input == arrived.end()) break;  // produced by a pass not built yet
          stage_ = s;
          g_.set_gpu_offset(layout_.stage_base(s));
          const int mb = plan.micro_batches() > 1 ? pass.micro_batch : -1;
          RankTasks ready = first ? nothing : input->second;
          if (input != arrived.end()) arrived.erase(input);
          const int from = plan.first_layer(pass.chunk), to = from + plan.layers_per_chunk();
          if (!pass.backward) {
            bool sharded = sp;
            for (int l = from; l < to; ++l) {
              const AttentionHalf half = attention_half(l, mb, ready, sharded);
              ready = ffn_half(l, half.layer, half.done, sharded);
            }
          } else {
            for (int l = to - 1; l >= from; --l) {
              ready = layer_backward(l, mb, ready, grads[l].layer);
              grads[l].gpu_base = layout_.stage_base(s);
              grads[l].done.resize(gpus);
              for (int gpu = 0; gpu < gpus; ++gpu)
                grads[l].done[gpu].insert(grads[l].done[gpu].end(), ready[gpu].begin(), ready[gpu].end());
            }
          }
          g_.set_gpu_offset(0);
          if (next[0] == 0 && s == 0) {  // the first pass predicts the graph
            const double passes = double(plan.chunks()) * plan.micro_batches();
            check_size(passes * passes_per_forward(),
                       fmt::format("{} in the first pipeline pass x {:g} passes{}", g_.task_count(), passes,
                                   passes_per_forward() > 1 ? fmt::format(" x {:g} for training", passes_per_forward()) : ""));
          }
          // The pass's output goes to the next chunk (forward) or the previous one (backward).
          const bool last = pass.backward ? pass.chunk == 0 : pass.chunk == last_chunk;
          if (last && pass.backward) continue;
          if (last) {  // the loss: the backward of the last chunk starts on the same GPUs
            if (in_.run.phase == Phase::TRAIN) arrived[{true, pass.micro_batch, pass.chunk}] = ready;
            continue;
          }
          const int to_chunk = pass.chunk + (pass.backward ? -1 : 1);
          arrived[{pass.backward, pass.micro_batch, to_chunk}] =
              send_to_stage(s, plan.stage_of_chunk(to_chunk), p2p_bytes,
                            pass.backward ? "pp send gradients" : "pp send activations", ready);
        }
      }
      if (!progress) throw std::logic_error("pipeline schedule deadlocks");  // a schedule bug, never user input
    }
    stage_ = -1;
  }

  // Every GPU of stage `from` sends `bytes` to its peer (same CP and TP rank) in stage `to` once `ready` is done;
  // the receiving GPUs' next pass waits for the flows.
  RankTasks send_to_stage(int from, int to, double bytes, const char* name, const RankTasks& ready) {
    RankTasks delivered(ready.size());
    for (std::size_t gpu = 0; gpu < ready.size(); ++gpu) {
      const int local = static_cast<int>(gpu);
      const TaskId flow = g_.add_flow(layout_.stage_base(from) + local, layout_.stage_base(to) + local, bytes,
                                      Traffic::PP, name, -1, -1);
      g_.depend_all(flow, ready[gpu]);
      delivered[gpu] = {flow};
    }
    return delivered;
  }

  void build_one_stage(std::vector<LayerGradients>& grads) {
    // Micro-batches (run.micro_batches, DualPipe-style): independent chains interleaved layer by layer, so one
    // micro-batch's TP/EP collectives can run while the next one's attention moves CP traffic.
    const int mbs = in_.run.micro_batches;
    std::vector<RankTasks> ready(mbs, RankTasks(layout_.used_gpus()));  // per GPU: what the next layer waits for
    // Sequence parallelism starts from the embedding's T/tp shard per rank.
    std::deque<bool> sharded(mbs, in_.parallel.sequence_parallel && in_.parallel.tp > 1);
    LayerRepetition repetition(g_, in_.run.fast_path);
    for (int l = 0; l < in_.model.layers; ++l) {
      const std::string key = layer_key(l, sharded);
      if (l > 0 && repetition.copy(key, ready)) continue;
      repetition.begin(key, ready);
      // Every micro-batch's attention half, then every FFN half: one's collectives overlap the next one's kernels.
      std::vector<AttentionHalf> halves;
      for (int mb = 0; mb < mbs; ++mb) halves.push_back(attention_half(l, mbs > 1 ? mb : -1, ready[mb], sharded[mb]));
      for (int mb = 0; mb < mbs; ++mb)
        ready[mb] = ffn_half(l, halves[mb].layer, halves[mb].done, sharded[mb]);
      repetition.end(ready);
      if (l == 0) {  // the first layer predicts the whole graph
        const double passes = passes_per_forward();
        check_size(in_.model.layers * passes,
                   fmt::format("{} in the first layer x {} layers{}", g_.task_count(), in_.model.layers,
                               passes > 1 ? fmt::format(" x {:g} for training", passes) : ""));
      }
    }
    if (in_.run.phase == Phase::TRAIN) {  // training: the backward pass, last layer first
      LayerRepetition back(g_, in_.run.fast_path, -1);
      for (int l = in_.model.layers - 1; l >= 0; --l) {
        const std::string key = backward_key(l);
        if (l < in_.model.layers - 1 && back.copy(key, ready)) {
          // The copy's last layer is its last micro-batch's backward; its outputs are the gradients' completion.
          grads[l].layer = static_cast<int>(g_.layers().size()) - 1;
          grads[l].done = gradients_done(ready);
          continue;
        }
        back.begin(key, ready);
        for (int mb = 0; mb < mbs; ++mb) ready[mb] = layer_backward(l, mbs > 1 ? mb : -1, ready[mb], grads[l].layer);
        grads[l].done = gradients_done(ready);
        back.end(ready);
      }
    }
  }

  // Gradients accumulate over micro-batches: a layer's are complete after every micro-batch's backward of it.
  RankTasks gradients_done(const std::vector<RankTasks>& ready) const {
    RankTasks done(layout_.used_gpus());
    for (const RankTasks& mb : ready)
      for (int gpu = 0; gpu < layout_.used_gpus(); ++gpu) done[gpu].insert(done[gpu].end(), mb[gpu].begin(), mb[gpu].end());
    return done;
  }

  // All that building backward layer `index` reads besides its input tasks: its forward key's kinds, FFN and token
  // layouts (a full recomputation replays the forward from the layer's own sharding, not the builder's state).
  std::string backward_key(int index) const { return "backward " + layer_key(index, {}); }

  // All that building forward layer `index` reads besides its input tasks (attention lowerings see only the graph
  // layer): layers of one key are built alike (workloads/layer_repetition.hpp).
  std::string layer_key(int index, const std::deque<bool>& sharded) const {
    const MoeSpec& moe = in_.model.moe;
    const std::optional<Partition> from = relayout_from(in_, index);
    std::string key = fmt::format("{} moe {} layout {} from {}", layer_kinds_name(in_.model.layer_kind(index)),
                                  moe.experts > 0 && index >= moe.first_dense_layers,
                                  int(layer_token_layout(in_, index)), from ? int(*from) : -1);
    for (bool s : sharded) key += s ? " s" : " -";
    return key;
  }

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
      return allreduce(g_, group, bytes, {Traffic::TP, name, layer}, group_ready);
    });
  }

  // Ring all-gather / reduce-scatter over every TP group (sequence parallelism: activations outside the TP GEMMs
  // are sharded T/tp per rank). `bytes` is the whole activation, T x d_model.
  RankTasks tp_allgather(int layer, double bytes, const RankTasks& ready, const char* name) {
    if (in_.parallel.tp == 1) return ready;
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return allgather(g_, group, bytes / in_.parallel.tp, {Traffic::TP, name, layer}, group_ready);
    });
  }
  RankTasks tp_reduce_scatter(int layer, double bytes, const RankTasks& ready, const char* name) {
    if (in_.parallel.tp == 1) return ready;
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return reduce_scatter(g_, group, bytes, {Traffic::TP, name, layer}, group_ready);
    });
  }

  bool overlapped() const { return in_.parallel.tp_comm_overlap && in_.parallel.tp > 1; }
  double tp() const { return in_.parallel.tp; }
  // The all-gather of the T x d_model activation (one T/tp shard per rank) chunked with the GEMM that reads it,
  // and the reduce-scatter chunked with the GEMM that produces it (workloads/tp_comm_overlap.hpp).
  RankTasks overlapped_allgather(int layer, const ChunkedGemm& gemm, const RankTasks& ready, const char* name) {
    const double shard_bytes = shape_.tokens * in_.model.d_model * shape_.activation_bytes / tp();
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return allgather_overlapped(g_, group, shard_bytes, gemm, {Traffic::TP, name, layer}, group_ready);
    });
  }
  RankTasks overlapped_reduce_scatter(int layer, const ChunkedGemm& gemm, const RankTasks& ready, const char* name) {
    const double shard_bytes = shape_.tokens * in_.model.d_model * shape_.activation_bytes / tp();
    return per_tp_group(ready, [&](const std::vector<int>& group, const RankTasks& group_ready) {
      return reduce_scatter_overlapped(g_, group, shard_bytes, gemm, {Traffic::TP, name, layer}, group_ready);
    });
  }

  // EP all-to-all over every EP group (workloads/expert_routing.hpp): each GPU routes its 1/tp share of its TP
  // group's tokens, top_k copies of d_model each (R bytes), sending EP rank j the share s_j of them; the combine
  // returns the same bytes the other way.
  RankTasks expert_alltoall(int layer, const RankTasks& ready, const char* name, bool combine) {
    const double routed_bytes = shape_.tokens / in_.parallel.tp * double(in_.model.moe.top_k) * in_.model.d_model *
                                shape_.activation_bytes;
    RankTasks out(ready.size());
    for (const auto& group : layout_.ep_groups()) {
      const int n = static_cast<int>(group.size());
      std::vector<std::vector<double>> bytes(n, std::vector<double>(n, 0));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j) (combine ? bytes[j][i] : bytes[i][j]) = routed_bytes * routing_.share[j];
      RankTasks group_ready;
      for (int gpu : group) group_ready.push_back(ready[gpu]);
      const RankTasks done = alltoallv(g_, group, bytes, {Traffic::EP, name, layer}, group_ready);
      for (int i = 0; i < n; ++i) out[group[i]] = done[i];
    }
    return out;
  }

  std::vector<CpAlgorithm> layer_algorithms(const LayerKinds& kinds) const {
    std::vector<CpAlgorithm> out;
    for (AttentionKind kind : kinds) out.push_back(in_.cp.algorithm(kind));
    return out;
  }

  static KernelCost twice(const KernelCost& c) { return {2 * c.duration_s, 2 * c.flops, 2 * c.hbm_bytes}; }

  // Backward of one dense layer: FFN and projections cost twice their forward GEMMs (input and weight gradients),
  // the attention backward follows the CP algorithm (train_attention.cpp), TP all-reduces mirror the forward.
  // `micro_batch`: its index when there are several, else -1 (it only names the layer in the trace).
  // run.recompute: full (activation checkpointing) first replays the layer's whole forward, kernels and
  // collectives, from its checkpointed input, inside the backward layer; selective recomputes core attention and
  // the FFN intermediates, which FlashAttention's backward and the CP backward's own KV passes already pay for in
  // this model, so it adds no task (docs/model.md).
  RankTasks layer_backward(int index, int micro_batch, const RankTasks& upstream, int& layer) {
    const LayerKinds& kinds = in_.model.layer_kind(index);
    layer = g_.add_layer(kinds, layer_algorithms(kinds), true, {index, -1, micro_batch, stage_});
    RankTasks ready = upstream;
    if (in_.run.recompute == Recompute::FULL) {
      bool sharded = in_.parallel.sequence_parallel && in_.parallel.tp > 1;  // as every layer's output leaves it
      const AttentionHalf replay = attention_half(index, micro_batch, upstream, sharded, layer);
      ready = ffn_half(index, layer, replay.done, sharded);
    }
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.activation_bytes;
    const double ffn = double(in_.model.ffn_dim) / in_.parallel.tp;
    RankTasks after_ffn(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      KernelCost up = gemm(in_, t, d, 2 * ffn, ffn_dt), down = gemm(in_, t, ffn, d, ffn_dt);
      after_ffn[gpu] = {compute(gpu, "ffn backward", layer,
                                twice({up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes}),
                                ready[gpu])};
    }
    const RankTasks after_ar = tp_allreduce(layer, t * d * s, after_ffn, "tp allreduce ffn backward");
    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_o[gpu] = {compute(gpu, "o_proj backward", layer, twice(gemm(in_, t, shape_.q_width(), d, proj_dt)), after_ar[gpu])};
    LayerContext ctx{g_, in_, shape_, layout_, layer};
    RankTasks after_attn(gpus);
    for (AttentionKind kind : kinds) {  // the scenario checks that every kind's mode has a backward lowering
      const RankTasks done = find_mode(kind, in_.cp.algorithm(kind))->backward(ctx, after_o);
      for (int gpu = 0; gpu < gpus; ++gpu) after_attn[gpu].insert(after_attn[gpu].end(), done[gpu].begin(), done[gpu].end());
    }
    RankTasks after_qkv(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_qkv[gpu] = {compute(gpu, "qkv_proj backward", layer,
                                twice(gemm(in_, t, d, shape_.q_width() + 2 * shape_.kv_width(), proj_dt)), after_attn[gpu])};
    const RankTasks done = tp_allreduce(layer, t * d * s, after_qkv, "tp allreduce attn backward");
    // The input's gradients go back to the previous layer's layout.
    if (const std::optional<Partition> from = relayout_from(in_, index))
      return cp_relayout(layer, layer_token_layout(in_, index), *from, done, "cp re-layout backward");
    return done;
  }

  // The hidden states of every CP group, from token layout `from` to `to` (workloads/relayout.hpp).
  RankTasks cp_relayout(int layer, Partition from, Partition to, const RankTasks& ready, const char* name) {
    const auto bytes = relayout_bytes(in_, from, to);
    RankTasks out(ready.size());
    for (int t = 0; t < in_.parallel.tp; ++t) {
      const auto group = layout_.cp_group(t);
      RankTasks group_ready;
      for (int gpu : group) group_ready.push_back(ready[gpu]);
      const RankTasks done = alltoallv(g_, group, bytes, {Traffic::CP, name, layer}, group_ready);
      for (std::size_t i = 0; i < group.size(); ++i) out[group[i]] = done[i];
    }
    return out;
  }

  struct AttentionHalf {
    int layer;
    RankTasks done;
  };

  // The attention half of layer `index`: QKV, the CP attention lowering(s), the output projection, TP all-reduce.
  // `sharded`: whether each GPU holds only its T/tp share of the activations (sequence parallelism after a
  // reduce-scatter, or EP after a combine), so the TP GEMMs must all-gather them first; updated on return.
  // `micro_batch`: its index when there are several, else -1 (it only names the layer in the trace).
  // `into_layer` >= 0: the tasks join that (backward) layer instead of a new forward one (full recomputation).
  AttentionHalf attention_half(int index, int micro_batch, const RankTasks& layer_input, bool& sharded,
                               int into_layer = -1) {
    // A layer's kind may join several attention kinds computed side by side ("swa+csa"); each has its algorithm.
    const LayerKinds& kinds = in_.model.layer_kind(index);
    const int layer =
        into_layer >= 0 ? into_layer : g_.add_layer(kinds, layer_algorithms(kinds), false, {index, -1, micro_batch, stage_});
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.activation_bytes;
    const double qkv_width = shape_.q_width() + 2 * shape_.kv_width();
    RankTasks after_qkv(gpus);
    // A layer whose kind deals tokens differently from the previous one's first re-lays its input out (a
    // recomputed forward replays from the input it checkpointed, already in this layer's layout).
    const std::optional<Partition> relayout = into_layer < 0 ? relayout_from(in_, index) : std::nullopt;
    const RankTasks input = relayout ? cp_relayout(layer, *relayout, layer_token_layout(in_, index), layer_input,
                                                   "cp re-layout")
                                     : layer_input;
    if (overlapped() && sharded) {
      after_qkv = overlapped_allgather(layer, {"qkv_proj", gemm(in_, t / tp(), d, qkv_width, proj_dt), layer}, input,
                                       "tp allgather attn");
    } else {
      const RankTasks ready = sharded ? tp_allgather(layer, t * d * s, input, "tp allgather attn") : input;
      for (int gpu = 0; gpu < gpus; ++gpu)
        after_qkv[gpu] = {compute(gpu, "qkv_proj", layer, gemm(in_, t, d, qkv_width, proj_dt), ready[gpu])};
    }

    LayerContext ctx{g_, in_, shape_, layout_, layer};
    RankTasks after_attn(gpus);
    for (AttentionKind kind : kinds) {
      const RankTasks done = find_mode(kind, in_.cp.algorithm(kind))->forward(ctx, after_qkv);
      for (int gpu = 0; gpu < gpus; ++gpu) after_attn[gpu].insert(after_attn[gpu].end(), done[gpu].begin(), done[gpu].end());
    }

    sharded = in_.parallel.sequence_parallel && in_.parallel.tp > 1;
    if (overlapped())
      return {layer, overlapped_reduce_scatter(layer, {"o_proj", gemm(in_, t / tp(), shape_.q_width(), d, proj_dt), layer},
                                               after_attn, "tp reducescatter attn")};
    RankTasks after_o(gpus);
    for (int gpu = 0; gpu < gpus; ++gpu)
      after_o[gpu] = {compute(gpu, "o_proj", layer, gemm(in_, t, shape_.q_width(), d, proj_dt), after_attn[gpu])};
    return {layer, sharded ? tp_reduce_scatter(layer, t * d * s, after_o, "tp reducescatter attn")
                           : tp_allreduce(layer, t * d * s, after_o, "tp allreduce attn")};
  }

  // The FFN half of layer `index` (registered as `layer`): the dense or MoE FFN, EP all-to-alls, TP all-reduce.
  RankTasks ffn_half(int index, int layer, const RankTasks& after_attn, bool& sharded) {
    const int gpus = layout_.used_gpus();
    const double d = in_.model.d_model, t = shape_.tokens, s = shape_.activation_bytes;

    RankTasks after_ffn(gpus);
    // MoE layers run top_k routed + shared experts per token. With parallel.ep > 1 the routed experts are spread
    // over the EP group: an all-to-all dispatches the tokens to their experts' GPUs and another combines the
    // results; a GPU's routed work follows its share of the routing (skew makes EP rank 0 the straggler).
    const MoeSpec& moe = in_.model.moe;
    const bool moe_layer = moe.experts > 0 && index >= moe.first_dense_layers;
    const bool ep = moe_layer && in_.parallel.ep > 1;
    if (overlapped() && sharded && !ep) {  // the up projection behind the all-gather, the down one before the RS
      const double ffn = (moe_layer ? (moe.top_k + moe.shared_experts) * moe.expert_ffn_dim : double(in_.model.ffn_dim)) /
                         in_.parallel.tp;
      const RankTasks up = overlapped_allgather(layer, {"ffn up", gemm(in_, t / tp(), d, 2 * ffn, ffn_dt), layer}, after_attn,
                                                "tp allgather ffn");
      return overlapped_reduce_scatter(layer, {"ffn down", gemm(in_, t / tp(), ffn, d, ffn_dt), layer}, up,
                                       "tp reducescatter ffn");
    }
    // EP dispatches each GPU's T/tp share: from a sequence-parallel shard as it is, otherwise from the full copy.
    const RankTasks ffn_in = ep ? expert_alltoall(layer, after_attn, "ep dispatch", false)
                             : sharded ? tp_allgather(layer, t * d * s, after_attn, "tp allgather ffn")
                                       : after_attn;
    for (int gpu = 0; gpu < gpus; ++gpu) {
      const double routed = ep ? moe.top_k * routing_.load_factor(layout_.ep_rank(gpu)) : moe.top_k;
      const double ffn = (moe_layer ? (routed + moe.shared_experts) * moe.expert_ffn_dim : double(in_.model.ffn_dim)) /
                         in_.parallel.tp;
      KernelCost up = gemm(in_, t, d, 2 * ffn, ffn_dt), down = gemm(in_, t, ffn, d, ffn_dt);
      KernelCost both{up.duration_s + down.duration_s, up.flops + down.flops, up.hbm_bytes + down.hbm_bytes};
      after_ffn[gpu] = {compute(gpu, "ffn", layer, both, ffn_in[gpu])};
    }
    if (ep) {
      // The combine returns each GPU its own share's results: the TP group holds T/tp each, gathered later.
      const RankTasks combined = expert_alltoall(layer, after_ffn, "ep combine", true);
      sharded = in_.parallel.sequence_parallel && in_.parallel.tp > 1;
      return sharded ? combined : tp_allgather(layer, t * d * s, combined, "tp allgather ffn");
    }
    sharded = in_.parallel.sequence_parallel && in_.parallel.tp > 1;
    return sharded ? tp_reduce_scatter(layer, t * d * s, after_ffn, "tp reducescatter ffn")
                   : tp_allreduce(layer, t * d * s, after_ffn, "tp allreduce ffn");
  }

  const Dtype proj_dt = in_.run.dtypes.projections, ffn_dt = in_.run.dtypes.ffn;
  int stage_ = -1;  // the pipeline stage being built (pp > 1), for the layers' names
  ShardShape shape_;
  ExpertRouting routing_;
};

}  // namespace

TaskGraph generate_layer_stack(const WorkloadInputs& in, int gpu_count) {
  return LayerStackBuilder(in, gpu_count).build();
}

}  // namespace cpsim
