// The decode workload (cp-overview.md, decode CP; tree attention): `new_tokens` decode steps, each running every
// layer for the B new tokens against a KV cache of context_len tokens sharded evenly over the CP ranks.
//   tree:   every CP rank holds the token's hidden state; it computes partial attention (max, sum, numerator of
//           the softmax) over its KV shard, then a tree all-reduce merges the three partial results in
//           ceil(log2 N) levels (one flow per quantity and partner per level); projections and FFN run on every
//           rank (replicated).
//   pass-q: the token lives on one CP rank (round-robin over steps); its Q travels the ring for N-1 hops, every
//           visited rank computes partial attention over its shard and returns (O, log-sum-exp) to the owner,
//           which merges them and runs the projections and FFN.
// Time per output token = makespan / new_tokens.
#pragma once
#include "workloads/workload.hpp"

namespace cpsim {

TaskGraph generate_decode(const WorkloadInputs& in, int gpu_count);

}  // namespace cpsim
