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

// Tokens a rank holds: S / N (the partitions above are all equal-sized).
inline std::uint64_t tokens_per_rank(std::uint64_t seq_len, int cp) { return seq_len / cp; }

}  // namespace cpsim
