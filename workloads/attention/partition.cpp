#include "workloads/attention/partition.hpp"

#include <algorithm>
#include <utility>
#include <vector>

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

namespace {

// A rank's tokens as runs [first, last) of positions (contiguous: one, zigzag: two); striped has none.
std::vector<std::pair<std::uint64_t, std::uint64_t>> token_runs(Partition p, std::uint64_t s, int n, int rank) {
  if (p == Partition::CONTIGUOUS) return {{rank * (s / n), (rank + 1) * (s / n)}};
  const std::uint64_t c = s / (2 * std::uint64_t(n));
  return {{rank * c, (rank + 1) * c}, {(2 * n - 1 - rank) * c, (2 * n - rank) * c}};
}

// Positions t in [0, x) with t mod n = r.
std::uint64_t count_residue_below(std::uint64_t x, int n, int r) { return x > std::uint64_t(r) ? (x - r - 1) / n + 1 : 0; }

}  // namespace

double shared_tokens(Partition a, int rank_a, Partition b, int rank_b, std::uint64_t seq_len, int cp) {
  if (a == Partition::STRIPED && b == Partition::STRIPED) return rank_a == rank_b ? double(seq_len / cp) : 0.0;
  if (a == Partition::STRIPED) return shared_tokens(b, rank_b, a, rank_a, seq_len, cp);
  double shared = 0;
  for (const auto& [from, to] : token_runs(a, seq_len, cp, rank_a)) {
    if (b == Partition::STRIPED) {
      shared += double(count_residue_below(to, cp, rank_b) - count_residue_below(from, cp, rank_b));
      continue;
    }
    for (const auto& [from_b, to_b] : token_runs(b, seq_len, cp, rank_b))
      if (std::min(to, to_b) > std::max(from, from_b)) shared += double(std::min(to, to_b) - std::max(from, from_b));
  }
  return shared;
}

}  // namespace cpsim
