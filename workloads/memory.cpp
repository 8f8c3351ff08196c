#include "workloads/memory.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "sim/scenario/units.hpp"
#include "workloads/attention/registry.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/volumes.hpp"

namespace cpsim {
namespace {

// KV cache one GPU keeps for one layer of `kinds` (docs/heterogeneous-attention.md, "Memory"): each kind's rule
// (workloads/attention/<kind>/: compressed entries for CSA/HCA, the whole sequence for DSA's AllGather-CP, a
// [B, H, d, d] state for linear layers), by default its own tokens' K and V. Per token: 2 * d_kv_gpu * s; with MLA
// the cache holds the latent and the decoupled RoPE key, (d_c + rope_dim) * s, or the seed's c_kv = 2 * d_c * s
// when `seed_layout` (the formula column).
double layer_kv_cache_bytes(const WorkloadInputs& in, const ShardShape& sh, const LayerKinds& kinds,
                            bool seed_layout = false) {
  const double s = sh.kv_bytes, local = sh.tokens;  // run.dtypes.kv_cache
  const MlaSpec& mla = in.model.mla;
  const double per_token = mla.d_c > 0 ? (seed_layout ? 2.0 * mla.d_c : double(mla.d_c) + mla.rope_dim) * s
                                       : 2.0 * sh.kv_width() * s;
  double bytes = 0;
  for (AttentionKind kind : kinds) {
    const AttentionKindDef& def = attention_kind(kind);
    const KvCacheInputs kv{in, sh, in.cp.algorithm(kind), local, per_token};
    bytes += def.kv_cache_bytes ? def.kv_cache_bytes(kv) : local * per_token;
  }
  return bytes;
}

// Modes whose traffic is a chain of point-to-point hops: a rank double-buffers one hop.
bool hop_chain(CpAlgorithm a) {
  return a == CpAlgorithm::RING || a == CpAlgorithm::PASS_Q || a == CpAlgorithm::LASP1;
}

}  // namespace

double layer_comm_buffer_bytes(const WorkloadInputs& in, const LayerKinds& kinds) {
  const int n = in.parallel.cp;
  if (n == 1) return 0;
  const CommParams p = comm_params(in);
  const bool train = in.run.phase == Phase::TRAIN;
  double bytes = 0;
  for (AttentionKind kind : kinds) {
    const CpAlgorithm a = in.cp.algorithm(kind);
    const MobaCpPlan& selection = kind == AttentionKind::MOBA ? in.cp.moba : MobaCpPlan{};
    const AttentionModeDef* mode = find_mode(kind, a);
    const auto forward = mode_volume(p, kind, a, selection);
    if (mode && mode->staging) {
      bytes += mode->staging(p, train);
    } else if (!forward) {  // no closed form (dense `auto` before it is resolved): a ring's two K, V blocks
      bytes += 2 * (p.B * p.S / n) * p.c_kv();
    } else if (hop_chain(a)) {  // one hop arriving while the previous one is used; gradients travel alongside
      bytes += (train ? 4 : 2) * forward->bytes / (n - 1);
    } else {  // everything that arrives at once: all-gathered KV or states, all-to-all receive buffers, selections
      const auto backward = train ? mode_volume(p, kind, a, selection, true) : std::nullopt;
      bytes += std::max(forward->bytes, backward ? backward->bytes : 0.0);
    }
  }
  return bytes;
}

LayerWeightBytes layer_weight_bytes(const WorkloadInputs& in, int layer) {
  const ModelSpec& m = in.model;
  // Projection weights in run.dtypes.projections, FFN and expert weights in run.dtypes.ffn.
  const double sp = dtype_bytes(in.run.dtypes.projections), sf = dtype_bytes(in.run.dtypes.ffn);
  const double d = m.d_model, tp = in.parallel.tp;
  const double attention = d * (m.q_width() + 2 * m.d_kv()) + double(m.q_width()) * d;
  const bool moe_layer = m.moe.experts > 0 && layer >= m.moe.first_dense_layers;
  if (!moe_layer) return {attention / tp * sp + 3.0 * d * m.ffn_dim / tp * sf, 0};
  const double expert = 3.0 * d * m.moe.expert_ffn_dim;  // SwiGLU gate, up, down
  const double routed = double(m.moe.experts) * expert / (in.parallel.ep > 1 ? in.parallel.ep : tp) * sf;
  return {attention / tp * sp + m.moe.shared_experts * expert / tp * sf + routed, routed};
}

MemoryBreakdown prefill_memory(const WorkloadInputs& in) {
  MemoryBreakdown peak = stage_memory(in, 0);
  for (int stage = 1; stage < in.parallel.pp; ++stage)
    if (MemoryBreakdown m = stage_memory(in, stage); m.total_bytes() > peak.total_bytes()) peak = m;
  return peak;
}

MemoryBreakdown stage_memory(const WorkloadInputs& in, int stage) {
  const ShardShape sh = shard_shape(in);
  const PipelinePlan plan = pipeline_plan(in.model, in.run, in.parallel);
  const std::vector<int> layers = plan.stage_layers(stage);
  MemoryBreakdown m;
  const double s_embed = dtype_bytes(in.run.dtype);  // embeddings stay in run.dtype
  // The input embedding lives on the first stage, the output one on the last.
  const double embedding_share = ((stage == 0 ? 0.5 : 0) + (stage == plan.stages() - 1 ? 0.5 : 0));
  m.weights_bytes = embedding_share * in.model.embedding_params() / in.parallel.tp * s_embed;
  double params = embedding_share * in.model.embedding_params() / in.parallel.tp;  // per GPU, for the optimizer states
  for (int l : layers) {
    const ModelSpec& md = in.model;
    const bool moe_layer = md.moe.experts > 0 && l >= md.moe.first_dense_layers;
    const double expert = 3.0 * md.d_model * md.moe.expert_ffn_dim;
    params += (double(md.d_model) * (md.q_width() + 2 * md.d_kv()) + double(md.q_width()) * md.d_model) / in.parallel.tp;
    params += moe_layer ? md.moe.shared_experts * expert / in.parallel.tp +
                              md.moe.experts * expert / (in.parallel.ep > 1 ? in.parallel.ep : in.parallel.tp)
                        : 3.0 * md.d_model * md.ffn_dim / in.parallel.tp;
  }
  for (int l : layers) m.weights_bytes += layer_weight_bytes(in, l).total;
  // A pipeline keeps every micro-batch's cache; one stage (pp = 1) counts one micro-batch's (docs/model.md).
  const double cached_batches = in.parallel.pp > 1 ? plan.micro_batches() : 1;
  for (int l : layers) {
    m.kv_cache_bytes += cached_batches * layer_kv_cache_bytes(in, sh, in.model.layer_kind(l));
    m.kv_cache_seed_bytes += cached_batches * layer_kv_cache_bytes(in, sh, in.model.layer_kind(l), true);
  }
  m.framework_reserve_bytes = in.run.memory_reserve_bytes;
  // Activations do not depend on the kind; the communication buffers do: the stage's largest layer's, one layer's
  // collectives being in flight at a time.
  const LayerMemory layer = layer_memory(in, {AttentionKind::DENSE});
  const double working = layer.working_bytes - layer.comm_bytes;
  for (int l : layers) m.comm_buffers_bytes = std::max(m.comm_buffers_bytes, layer_comm_buffer_bytes(in, in.model.layer_kind(l)));
  m.activations_bytes = working;
  if (in.run.phase == Phase::TRAIN) {
    // What the forward keeps for the backward, plus one layer's working set beyond it while it (re)runs: the
    // stage's layers once per chunk pass in flight at its peak (a pipeline's warm-up forwards, 1 without one).
    const double kept_layers = double(plan.max_chunks_in_flight(stage)) * plan.layers_per_chunk();
    m.activations_bytes = layer.kept_bytes * (kept_layers - 1) + working;
    m.kv_cache_bytes = m.kv_cache_seed_bytes = 0;  // no cache across steps: K and V are among the activations
    m.gradients_bytes = m.weights_bytes;
    m.optimizer_states_bytes = params * 12;
    // ZeRO over the dp x cp ranks holding the same weights; stage 3 gathers one layer's weights at a time.
    const double shards = double(in.parallel.dp) * in.parallel.cp;
    if (in.parallel.zero >= 1) m.optimizer_states_bytes /= shards;
    if (in.parallel.zero >= 2) m.gradients_bytes /= shards;
    if (in.parallel.zero >= 3) {
      double largest_layer = 0;
      for (int l : layers) largest_layer = std::max(largest_layer, layer_weight_bytes(in, l).total);
      m.weights_bytes = m.weights_bytes / shards + largest_layer;
    }
  }
  return m;
}

LayerMemory layer_memory(const WorkloadInputs& in, const LayerKinds& kind) {
  const ShardShape sh = shard_shape(in);
  const double s = sh.activation_bytes, t = sh.tokens, d = in.model.d_model;  // run.dtypes.activations
  const double ffn = double(in.model.ffn_dim) / in.parallel.tp;
  // One layer's working set. Sequence parallelism shards the residual stream and the normed input over tp.
  const double residual = (in.parallel.sequence_parallel ? d / in.parallel.tp : d);
  const double ffn_intermediates = 2 * ffn;
  const double kept = 2 * residual + sh.q_width() + 2 * sh.kv_width() + sh.q_width();
  LayerMemory l;
  l.kv_bytes = in.run.phase == Phase::TRAIN ? 0 : layer_kv_cache_bytes(in, sh, kind);
  l.comm_bytes = layer_comm_buffer_bytes(in, kind);
  const double activations = t * s * (kept + ffn_intermediates);
  l.working_bytes = activations + l.comm_bytes;
  switch (in.run.recompute) {  // what a training forward keeps (workloads/model.hpp, Recompute)
    case Recompute::NONE: l.kept_bytes = activations; break;
    case Recompute::SELECTIVE: l.kept_bytes = t * s * kept; break;
    case Recompute::FULL: l.kept_bytes = t * s * residual; break;
  }
  return l;
}

MemoryVerdict memory_verdict(const MemoryBreakdown& m, double capacity_bytes) {
  return memory_verdict(m, capacity_bytes, m.total_bytes());
}

MemoryVerdict memory_verdict(const MemoryBreakdown& m, double capacity_bytes, double need_bytes) {
  MemoryVerdict v;
  v.capacity_bytes = capacity_bytes;
  v.need_bytes = need_bytes;
  v.fits = v.need_bytes <= capacity_bytes;
  v.overflow_bytes = v.fits ? 0 : v.need_bytes - capacity_bytes;
  const std::pair<const char*, double> terms[] = {{"weights", m.weights_bytes},
                                                  {"kv_cache", m.kv_cache_bytes},
                                                  {"activations", m.activations_bytes},
                                                  {"comm_buffers", m.comm_buffers_bytes},
                                                  {"gradients", m.gradients_bytes},
                                                  {"optimizer_states", m.optimizer_states_bytes},
                                                  {"framework_reserve", m.framework_reserve_bytes}};
  for (const auto& [name, bytes] : terms)  // the first of equals, in this order
    if (bytes > v.largest_term_bytes) v.largest_term = name, v.largest_term_bytes = bytes;
  return v;
}

std::string describe_overflow(const MemoryVerdict& v) {
  return fmt::format("needs {} of {} HBM (over by {}; largest term: {} {})", format_bytes(v.need_bytes),
                     format_bytes(v.capacity_bytes), format_bytes(v.overflow_bytes), v.largest_term,
                     format_bytes(v.largest_term_bytes));
}

}  // namespace cpsim
