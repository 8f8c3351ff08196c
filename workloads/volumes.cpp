#include "workloads/volumes.hpp"

#include <fmt/format.h>

#include "workloads/decode.hpp"

namespace cpsim {

CommParams comm_params(const WorkloadInputs& in) {
  const ShardShape sh = shard_shape(in);
  const ModelSpec& m = in.model;
  const AttentionSpec& a = m.attention;
  CommParams p;
  p.S = static_cast<double>(in.run.seq_len);
  p.N = in.parallel.cp;
  p.B = in.run.batch;
  p.s = sh.dtype_bytes;
  p.kv_width = m.mla.d_c > 0 ? m.mla.d_c : sh.kv_width();
  p.gate_width = p.kv_width;
  p.d_model = m.d_model;
  p.linear_heads = sh.q_heads;
  p.linear_head_dim = sh.head_dim;
  p.ssm_state_dim = a.ssm_state_dim;
  p.n_win = m.sliding_window;
  p.csa_ratio = a.csa_ratio;
  p.hca_ratio = a.hca_ratio;
  p.csa_top_k = a.csa_top_k;
  p.dsa_top_k = a.dsa_top_k;
  p.moba_block = a.moba_block;
  p.moba_top_k_blocks = a.moba_top_k_blocks;
  p.q_heads = sh.q_heads;
  p.kv_heads = sh.kv_heads;
  p.head_dim = sh.head_dim;
  p.ulysses_degree = in.cp.dense.ulysses_degree;
  p.cached = static_cast<double>(in.run.cached_tokens);
  p.decode = in.run.phase == Phase::DECODE;
  p.new_tokens = in.run.new_tokens;
  p.indexer_heads = a.indexer_heads;
  p.indexer_dim = a.indexer_dim;
  p.csa_exact = in.cp.exact_selection.count(AttentionKind::CSA) > 0;
  p.dsa_exact = in.cp.exact_selection.count(AttentionKind::DSA) > 0;
  return p;
}

std::optional<VolumeFormula> cp_volume_per_rank(const WorkloadInputs& in, const LayerInfo& layer) {
  const CommParams p = comm_params(in);
  VolumeFormula out;
  for (std::size_t i = 0; i < layer.kinds.size(); ++i) {
    const AttentionKind kind = layer.kinds[i];
    const CpAlgorithm algorithm = layer.algorithms[i];
    const auto v = mode_volume(p, kind, algorithm, kind == AttentionKind::MOBA ? in.cp.moba : MobaCpPlan{},
                               layer.backward);
    if (!v) return std::nullopt;
    out.bytes += v->bytes;
    if (v->exact) out.exact = out.exact.value_or(true) && *v->exact;
    out.formula += (out.formula.empty() ? "" : " + ") + std::string(kind_name(kind)) + "/" + algorithm_name(algorithm) +
                   (layer.backward ? "-backward" : "") + ": " + v->formula;
    // Decode: the token's hidden state comes from the previous layer's GPU when that layer lives elsewhere.
    if (i == 0 && p.decode && decode_hidden_moves_into(in, layer.kinds)) {
      const double moved = in.run.batch * in.model.d_model * shard_shape(in).activation_bytes;
      out.bytes += moved;
      out.formula += fmt::format(" + hidden state from the previous layer's GPU: B*d_model*s_act = {}", moved);
    }
    // Full recomputation replays the forward inside the backward layer (layer_stack.cpp): its bytes come too.
    if (layer.backward && in.run.recompute == Recompute::FULL) {
      const auto replay = mode_volume(p, kind, algorithm, kind == AttentionKind::MOBA ? in.cp.moba : MobaCpPlan{});
      if (!replay) return std::nullopt;
      out.bytes += replay->bytes;
      out.formula += " + forward replayed (run.recompute: full): " + replay->formula;
    }
  }
  return out;
}

}  // namespace cpsim
