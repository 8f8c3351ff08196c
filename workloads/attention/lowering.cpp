#include "workloads/attention/lowering.hpp"

#include "workloads/attention/partition.hpp"

namespace cpsim {

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
