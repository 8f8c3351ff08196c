// Ring attention (pass-KV) for one layer over one CP ring: N attention steps and N-1 KV transfers. At step k rank i
// attends its queries to the KV block of rank (i-k) mod N while forwarding that block to rank i+1 (double buffering:
// the transfer of step k overlaps the attention of step k). A rank enters step k+1 when its attention, its send and
// its receive of step k are done, so on a symmetric, uncontended ring a layer's attention takes
//   sum_{k=0}^{N-2} max(c_k, latency + block_bytes / bw) + c_{N-1}.
#pragma once
#include <functional>
#include <vector>

#include "workloads/attention/lowering.hpp"

namespace cpsim {

struct RingAttentionSpec {
  int layer = -1;
  double kv_block_bytes = 0;  // K and V of one rank's tokens (the payload of each step)
  // Cost of attending rank q's queries to rank kv's keys (zero flops = the step is skipped, e.g. fully masked).
  std::function<KernelCost(int q_rank, int kv_rank)> block_cost;
};

// `entry[i]`: tasks after which rank i's Q, K, V exist. Returns per rank the tasks after which its output is final.
RankTasks ring_attention(TaskGraph& g, const std::vector<int>& ring_gpus, const RingAttentionSpec& spec,
                         const RankTasks& entry);

// Training's ring backward ends with rank i holding the dK/dV of rank i+1's keys: one more hop of `bytes` home.
// Returns `done` with each rank also waiting for the hop it sends and the one it receives.
RankTasks return_dkv_home(TaskGraph& g, const std::vector<int>& ring_gpus, const RankTasks& done, double bytes,
                          int layer);

}  // namespace cpsim
