#include "workloads/memory.hpp"

namespace cpsim {
namespace {

// KV cache one GPU keeps for one layer of `kind` (docs/heterogeneous-attention.md, "Memory"): its own tokens' K
// and V, compressed entries for CSA/HCA, the whole sequence for DSA's AllGather-CP (every rank writes the full KV
// back: N x), and a [B, H, d, d] state instead of KV for linear layers. Per token: 2 * d_c * s with MLA.
double layer_kv_cache_bytes(const WorkloadInputs& in, const ShardShape& sh, const std::string& kind) {
  const double s = sh.dtype_bytes, local = sh.tokens, all = local * in.parallel.cp;
  const double per_token = 2 * (in.model.mla.d_c > 0 ? in.model.mla.d_c : sh.kv_width()) * s;
  const AttentionSpec& a = in.model.attention;
  double bytes = 0;
  for (const auto& part : split_layer_kind(kind)) {
    const std::string& algo = in.cp.algorithm(part);
    if (part == "csa") bytes += local / a.csa_ratio * per_token;
    else if (part == "hca") bytes += local / a.hca_ratio * per_token;
    else if (part == "dsa") bytes += (algo == "allgather" ? all : local) * per_token;
    else if (part == "linear") bytes += in.run.batch * sh.q_heads * double(sh.head_dim) * sh.head_dim * s;
    else bytes += local * per_token;
  }
  return bytes;
}

}  // namespace

LayerWeightBytes layer_weight_bytes(const WorkloadInputs& in, int layer) {
  const ModelSpec& m = in.model;
  const double s = dtype_bytes(in.run.dtype), d = m.d_model, tp = in.parallel.tp;
  const double attention = d * (m.q_width() + 2 * m.d_kv()) + double(m.q_width()) * d;
  const bool moe_layer = m.moe.experts > 0 && layer >= m.moe.first_dense_layers;
  if (!moe_layer) return {(attention + 3.0 * d * m.ffn_dim) / tp * s, 0};
  const double expert = 3.0 * d * m.moe.expert_ffn_dim;  // SwiGLU gate, up, down
  const double routed = double(m.moe.experts) * expert / (in.parallel.ep > 1 ? in.parallel.ep : tp) * s;
  return {(attention + m.moe.shared_experts * expert) / tp * s + routed, routed};
}

MemoryBreakdown prefill_memory(const WorkloadInputs& in) {
  const ShardShape sh = shard_shape(in);
  const double s = sh.dtype_bytes, t = sh.tokens, d = in.model.d_model;
  const double ffn = double(in.model.ffn_dim) / in.parallel.tp;
  MemoryBreakdown m;
  m.weights_bytes = in.model.embedding_params() / in.parallel.tp * s;
  for (int l = 0; l < in.model.layers; ++l) m.weights_bytes += layer_weight_bytes(in, l).total;
  for (int l = 0; l < in.model.layers; ++l) m.kv_cache_bytes += layer_kv_cache_bytes(in, sh, in.model.layer_kind(l));
  m.activations_bytes =
      t * s * (2 * d + sh.q_width() + 2 * sh.kv_width() + 2 * 2 * sh.kv_width() + sh.q_width() + 2 * ffn);
  // Training keeps every layer's activations for the backward pass (no recomputation).
  if (in.run.phase == "train") {
    m.activations_bytes *= in.model.layers;
    m.kv_cache_bytes = 0;  // no cache kept across steps: a layer's K and V are among its saved activations
    m.gradients_bytes = m.weights_bytes;
    m.optimizer_states_bytes = m.weights_bytes / s * 12;
  }
  return m;
}

}  // namespace cpsim
