#include "workloads/attention/partition.hpp"

namespace cpsim {
namespace {
// Pairs between two equal chunks of c tokens: full if the key chunk precedes, triangle (with diagonal) if equal.
double chunk_pairs(std::uint64_t q_chunk, std::uint64_t kv_chunk, double c) {
  if (kv_chunk < q_chunk) return c * c;
  if (kv_chunk == q_chunk) return c * (c + 1) / 2;
  return 0;
}
}  // namespace

double causal_pairs(Partition p, std::uint64_t seq_len, int cp, int q_rank, int kv_rank) {
  const std::uint64_t n = static_cast<std::uint64_t>(cp);
  switch (p) {
    case Partition::CONTIGUOUS:
      return chunk_pairs(q_rank, kv_rank, static_cast<double>(seq_len / n));
    case Partition::ZIGZAG: {
      const double c = static_cast<double>(seq_len / (2 * n));
      const std::uint64_t q[2] = {std::uint64_t(q_rank), 2 * n - 1 - q_rank};
      const std::uint64_t k[2] = {std::uint64_t(kv_rank), 2 * n - 1 - kv_rank};
      double sum = 0;
      for (auto a : q)
        for (auto b : k) sum += chunk_pairs(a, b, c);
      return sum;
    }
    case Partition::STRIPED: {
      // Query i + N*a sees key j + N*b iff b < a, or b == a and j <= i.
      const double m = static_cast<double>(seq_len / n);
      return m * (m - 1) / 2 + (kv_rank <= q_rank ? m : 0);
    }
  }
  return 0;
}

double block_pairs(Partition p, bool full_mask, std::uint64_t seq_len, int cp, int q_rank, int kv_rank) {
  if (!full_mask) return causal_pairs(p, seq_len, cp, q_rank, kv_rank);
  const double l = static_cast<double>(seq_len / static_cast<std::uint64_t>(cp));
  return l * l;
}

BlockGeometry block_geometry(Partition p, bool full_mask, std::uint64_t seq_len, int cp, int q_rank, int kv_rank) {
  const double l = static_cast<double>(seq_len / static_cast<std::uint64_t>(cp));
  if (full_mask) return {l, l, false};
  switch (p) {
    case Partition::CONTIGUOUS:
      if (kv_rank == q_rank) return {l, l, true};
      return kv_rank < q_rank ? BlockGeometry{l, l, false} : BlockGeometry{};
    case Partition::ZIGZAG:
      if (kv_rank == q_rank) return {l, l, true};
      return kv_rank < q_rank ? BlockGeometry{l, l / 2, false} : BlockGeometry{l / 2, l, false};
    case Partition::STRIPED: return {l, l, true};
  }
  return {};
}

}  // namespace cpsim
