#include "workloads/attention_lowering.hpp"

#include "workloads/partition.hpp"

namespace cpsim {

const std::vector<LoweringEntry>& attention_lowerings() {
  static const std::vector<LoweringEntry> table = {
      {"dense", "ring", lower_dense_ring},
      {"dense", "allgather", lower_dense_allgather},
      {"dense", "ulysses", lower_dense_ulysses},
      {"dense", "usp", lower_dense_usp},
      {"dense", "pass-q", lower_dense_pass_q},
      {"swa", "boundary", lower_swa_boundary},
      {"swa", "allgather", lower_swa_allgather},
      {"hca", "local", lower_hca_local},
      {"hca", "allgather", lower_hca_allgather},
      {"csa", "allgather", lower_csa_allgather},
      {"csa", "select-gather", lower_csa_select_gather},
      {"dsa", "allgather", lower_dsa_allgather},
      {"dsa", "select-gather", lower_dsa_select_gather},
      {"moba", "gather", lower_moba_gather},
      {"linear", "lasp1", lower_linear_lasp1},
      {"linear", "lasp2", lower_linear_lasp2},
  };
  return table;
}

AttentionLowering find_lowering(const std::string& kind, const std::string& algorithm) {
  for (const auto& e : attention_lowerings())
    if (kind == e.kind && algorithm == e.algorithm) return e.lower;
  return nullptr;
}

std::vector<std::string> algorithms_for(const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& e : attention_lowerings())
    if (kind == e.kind) out.emplace_back(e.algorithm);
  return out;
}

KernelCost dense_attention_block(const LayerContext& ctx, int q_rank, int kv_rank) {
  const WorkloadInputs& in = ctx.in;
  // New tokens attend causally to the new tokens of kv_rank and fully to its share of the persistent cache.
  const double cached = double(in.run.cached_tokens) / in.parallel.cp;
  const Partition part = in.cp.dense.partition;
  const bool full = in.run.full_mask;
  const double pairs =
      in.run.batch * (block_pairs(part, full, in.run.seq_len, in.parallel.cp, q_rank, kv_rank) +
                      cached * double(in.run.seq_len) / in.parallel.cp);
  if (pairs == 0) return {};
  const ShardShape& sh = ctx.shape;
  const double flops = 4 * pairs * sh.q_heads * sh.head_dim;  // QK^T and PV: 2 flops per multiply-add each
  const double kv_tokens = sh.tokens + in.run.batch * cached;
  const double bytes = 2 * sh.tokens * sh.q_width() * sh.dtype_bytes + 2 * kv_tokens * sh.kv_width() * sh.kv_bytes;
  // One kernel call per block: the partition's block geometry, with the rank's cached share in front of the keys
  // (a bottom-right aligned causal diagonal sees all of it).
  BlockGeometry g = block_geometry(part, full, in.run.seq_len, in.parallel.cp, q_rank, kv_rank);
  if (g.q_tokens == 0) g.q_tokens = double(in.run.seq_len) / in.parallel.cp;  // only the cache is visible
  const AttentionShape shape{g.q_tokens, g.kv_tokens + cached, double(sh.q_heads), double(in.run.batch),
                             g.causal ? Mask::CAUSAL_DIAGONAL : Mask::FULL, double(sh.q_heads) / sh.kv_heads};
  return {attention_time_s(in.gpu, in.run.dtypes.attention, shape, flops, bytes), flops, bytes};
}

}  // namespace cpsim
