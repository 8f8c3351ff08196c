#include "workloads/volumes.hpp"

#include <fmt/format.h>

namespace cpsim {

std::optional<VolumeFormula> cp_volume_per_rank(const WorkloadInputs& in, const std::string& kind,
                                                const std::string& algorithm) {
  const ShardShape sh = shard_shape(in);
  const double n = in.parallel.cp;
  if (kind == "dense" && algorithm == "ring") {
    // Ring attention (cp-overview 7.2): each rank receives the KV of the N-1 other ranks' S/N tokens.
    // Computed as (N-1) * (B*S/N) * 2 * d_kv * s so that it is exact in integers.
    const double bytes = (n - 1) * sh.tokens * 2 * sh.kv_width() * sh.dtype_bytes;
    return VolumeFormula{bytes, fmt::format("(N-1)/N * B * S * 2 * d_kv * s  [N={}, B={}, S={}, d_kv={}, s={}]",
                                            in.parallel.cp, in.run.batch, in.run.seq_len, sh.kv_width(),
                                            sh.dtype_bytes)};
  }
  return std::nullopt;
}

}  // namespace cpsim
