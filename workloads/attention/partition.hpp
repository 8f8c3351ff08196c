// How a sequence's tokens are dealt to CP ranks, and the causal work that follows from it.
//   contiguous: rank r holds tokens [r*S/N, (r+1)*S/N)
//   zigzag:     2N chunks of S/(2N); rank r holds chunks r and 2N-1-r (balances the causal triangle)
//   striped:    token t goes to rank t mod N
#pragma once
#include <cstdint>

#include "workloads/model.hpp"

namespace cpsim {

// Number of (query, key) pairs with key position <= query position, where the queries are the tokens of
// `q_rank` and the keys those of `kv_rank`. Exact (integer-valued, well inside double's 2^53).
double causal_pairs(Partition p, std::uint64_t seq_len, int cp, int q_rank, int kv_rank);

// Pairs of the block (q_rank, kv_rank): causal_pairs, or with a full (non-causal) mask every pair, (S/N)^2.
double block_pairs(Partition p, bool full_mask, std::uint64_t seq_len, int cp, int q_rank, int kv_rank);

// The kernel call that computes one block, per sequence: q_tokens queries against kv_tokens keys, causal
// (bottom-right aligned, a diagonal block) or not. Ring implementations call one kernel per block:
//   full mask: S/N x S/N non-causal;
//   contiguous: the diagonal block causal, earlier blocks full S/N x S/N, later ones none (0 x 0);
//   zigzag: the diagonal causal over both chunks (2c, c = S/2N); an earlier rank's block is both query chunks
//     against its first chunk (2c x c), a later rank's block the second query chunk against both (c x 2c);
//   striped: every block causal over S/N (a later rank's block misses only its diagonal).
struct BlockGeometry {
  double q_tokens = 0;
  double kv_tokens = 0;
  bool causal = false;
};
BlockGeometry block_geometry(Partition p, bool full_mask, std::uint64_t seq_len, int cp, int q_rank, int kv_rank);

// Tokens of one sequence that rank `rank_a` holds under layout `a` and rank `rank_b` under layout `b`: what a
// re-layout from a to b moves from rank_a to rank_b (workloads/relayout.hpp). Exact.
double shared_tokens(Partition a, int rank_a, Partition b, int rank_b, std::uint64_t seq_len, int cp);

// Tokens a rank holds: S / N (the partitions above are all equal-sized).
inline std::uint64_t tokens_per_rank(std::uint64_t seq_len, int cp) { return seq_len / cp; }

}  // namespace cpsim
