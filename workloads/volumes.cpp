#include "workloads/volumes.hpp"

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
    out.formula += (out.formula.empty() ? "" : " + ") + std::string(kind_name(kind)) + "/" + algorithm_name(algorithm) +
                   (layer.backward ? "-backward" : "") + ": " + v->formula;
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
