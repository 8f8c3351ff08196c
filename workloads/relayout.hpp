// Re-layout between layer kinds (docs/heterogeneous-attention.md, "Token layouts"): each kind's CP lowering deals a
// sequence's tokens to the ranks its own way (AttentionKindDef::token_layout: dense by cp.dense.partition, SWA
// allgather and DSA round-robin, linear, compressed and MoBA contiguous). When a layer's layout differs from the
// previous layer's, every CP group first exchanges the hidden states in an all-to-all: rank i sends rank j the
// tokens it holds under the old layout that j holds under the new one, B x shared_tokens x d_model x s bytes
// (/ tp with sequence parallelism). A training backward sends the gradients back the same way. A layer's layout
// is its first kind's; the first layer's input arrives in its layout (the embedding is per token).
#pragma once
#include <optional>
#include <vector>

#include "workloads/task_graph.hpp"
#include "workloads/workload.hpp"

namespace cpsim {

// The layout of model layer `index` under the scenario's plan.
Partition layer_token_layout(const WorkloadInputs& in, int index);
// The layout layer `index` receives its input in when it differs from its own (nullopt: none to re-layout).
std::optional<Partition> relayout_from(const WorkloadInputs& in, int index);

// bytes[i][j]: what CP rank i sends rank j to go from layout `from` to `to`, per GPU (one TP rank's share).
std::vector<std::vector<double>> relayout_bytes(const WorkloadInputs& in, Partition from, Partition to);
// The most any rank receives (the closed form summary.json reports beside the simulated figure).
double relayout_max_received_bytes(const WorkloadInputs& in, Partition from, Partition to);

}  // namespace cpsim
