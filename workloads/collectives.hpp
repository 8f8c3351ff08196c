// Collectives lowered to point-to-point flows, so the network model sees every byte. Each takes, per rank of the
// group, the tasks that must finish before the rank enters the collective, and returns, per rank, the tasks after
// which that rank holds the result. A flow of step s starts only when both of its ranks have finished step s-1
// (NCCL pairs sends with receives, one step at a time).
//
// Closed forms below are for an uncontended platform where every flow of a step has its own links, with one-hop
// latency `a` and per-direction bandwidth `B` (bytes/s); they are what tests/collectives_test.cpp asserts.
#pragma once
#include <string>
#include <vector>

#include "workloads/task_graph.hpp"

namespace cpsim {

using RankTasks = std::vector<std::vector<TaskId>>;  // indexed by position in the group

struct CollectiveTag {
  Traffic traffic = Traffic::NONE;
  std::string name;  // slice name in the trace, e.g. "tp allreduce"
  int layer = -1;
};

// One message of one step: group positions `from` -> `to`.
struct StepMessage {
  int from = 0;
  int to = 0;
  double bytes = 0;
  double overhead_s = -1;  // >= 0: the flow's fixed cost instead of the per-message one (TaskGraph::set_flow_overhead)
};

// The general lowering every collective below uses: steps run in order; a message of step s depends on what both
// of its ranks did in step s-1 (or on `ready` for step 0). A rank that takes no part in a step carries its
// previous tasks forward. Returns, per rank, the flows it sent or received in its last active step.
RankTasks run_steps(TaskGraph& g, const std::vector<int>& gpus, const std::vector<std::vector<StepMessage>>& steps,
                    const CollectiveTag& tag, const RankTasks& ready);

// Ring all-reduce of `bytes` per rank: 2(n-1) steps, each rank sending bytes/n to its right neighbour per step.
// Time: 2(n-1) * (a + bytes / (n * B)).
RankTasks ring_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready);

// Ring all-gather: every rank contributes `bytes_per_rank`; n-1 steps forwarding one block to the right.
// Each rank receives (n-1) * bytes_per_rank. Time: (n-1) * (a + bytes_per_rank / B).
RankTasks ring_allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank, const CollectiveTag& tag,
                         const RankTasks& ready);

// Direct all-gather: one step in which every rank sends its block to every other rank (n-1 concurrent flows out
// of and into each GPU, sharing its port). Each rank receives (n-1) * bytes_per_rank.
// Time with one port per GPU: a + (n-1) * bytes_per_rank / B.
RankTasks direct_allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank,
                           const CollectiveTag& tag, const RankTasks& ready);

// Ring reduce-scatter of `bytes` per rank (each ends with its reduced 1/n share): n-1 steps of bytes/n.
// Each rank receives (n-1)/n * bytes. Time: (n-1) * (a + bytes / (n * B)).
RankTasks ring_reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                              const RankTasks& ready);

// Direct reduce-scatter: one step in which every rank sends each other rank that rank's 1/n of its buffer.
// Each rank receives (n-1)/n * bytes. Time with one port per GPU: a + (n-1) * bytes / (n * B).
RankTasks direct_reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                                const RankTasks& ready);

// Hierarchical all-gather over `nodes` groups of consecutive ranks (`gpus` ordered node by node, equal sizes m):
// a ring all-gather inside each node, then a ring all-gather across nodes between ranks of the same local index,
// each carrying the m blocks its node gathered. Every rank receives (n-1) * bytes_per_rank.
// Time: (m-1)(a_in + b/B_in) + (nodes-1)(a_out + m*b/B_out).
RankTasks hierarchical_allgather(TaskGraph& g, const std::vector<int>& gpus, int nodes, double bytes_per_rank,
                                 const CollectiveTag& tag, const RankTasks& ready);

// Pairwise all-to-all: n-1 steps; in step k rank r sends `bytes_per_pair` to rank (r+k) mod n.
// Each rank receives (n-1) * bytes_per_pair. Time: (n-1) * (a + bytes_per_pair / B).
RankTasks pairwise_alltoall(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_pair,
                            const CollectiveTag& tag, const RankTasks& ready);

// Pairwise all-to-all with per-pair sizes: step k as above, rank r sending bytes[r][(r+k) mod n] (none if 0).
// A step waits only for the ranks it pairs, so the time is at most sum over k of (a + max_r bytes[r][(r+k)%n] / B).
RankTasks pairwise_alltoallv(TaskGraph& g, const std::vector<int>& gpus,
                             const std::vector<std::vector<double>>& bytes, const CollectiveTag& tag,
                             const RankTasks& ready);

// Tree (recursive-doubling) all-reduce of `bytes` per rank: for n a power of two, log2(n) steps in which rank r
// exchanges the whole buffer with r XOR 2^k. Otherwise the p = 2^floor(log2 n) first ranks run the butterfly, the
// n-p others first send their buffer to rank r-p and get the result back at the end (2 more steps).
// Time (n = 2^k): log2(n) * (a + bytes / B).
RankTasks tree_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready);

// Number of steps tree_allreduce uses for n ranks: ceil(log2 n) (+1 when n is not a power of two).
int tree_allreduce_steps(int n);

}  // namespace cpsim
