// Shared pieces of the per-kind CP lowerings: running a lowering on every CP group (one per TP rank), the KV
// bytes of a token, and roofline costs of the kernels the heterogeneous kinds use (attention over a number of
// query-key pairs, the FP8 lightning indexer, GEMMs, memory-bound passes). docs/heterogeneous-attention.md.
#pragma once
#include <functional>
#include <vector>

#include "workloads/attention/lowering.hpp"

namespace cpsim {

// One CP group's lowering: `gpus` in CP-rank order, `entry` indexed by CP rank; returns per CP rank its done set.
using GroupLowering = std::function<RankTasks(const std::vector<int>& gpus, const RankTasks& entry)>;
RankTasks for_each_cp_group(LayerContext& ctx, const RankTasks& entry, const GroupLowering& lower);

// Bytes of K + V for one token on one GPU: 2 * d_c * s with MLA (the latent is not split by TP), else
// 2 * d_kv_gpu * s. The seed's c_kv.
double kv_token_bytes(const LayerContext& ctx);
// Elements per token of what MoBA's centroids average (keys): d_c with MLA, else d_kv_gpu.
double key_width(const LayerContext& ctx);

// A compute task on `gpu` after `deps` (and after the GPU's previous kernel: streams are FIFO). In a backward pass
// (ctx.backward_scale > 1) it costs that multiple and is named "<name> backward".
TaskId add_kernel(LayerContext& ctx, int gpu, const char* name, int step, const KernelCost& cost,
                  const std::vector<TaskId>& deps);

// Softmax attention of `pairs` query-key pairs over this GPU's heads (QK^T and PV: 4 flops per pair and head
// dim), reading `q_tokens` queries and `kv_tokens` keys and values.
KernelCost attention_pairs_cost(const LayerContext& ctx, double pairs, double q_tokens, double kv_tokens);
// Lightning indexer: `pairs` scores of indexer_heads x indexer_dim in FP8.
KernelCost indexer_cost(const LayerContext& ctx, double pairs);
// A GEMM (m x k) * (k x n) in the run's dtype.
KernelCost gemm_cost(const LayerContext& ctx, double m, double k, double n);
// A memory-bound pass over `bytes` (top-k selection over scores, prefix sums, centroid pooling).
KernelCost memory_pass_cost(const LayerContext& ctx, double bytes);

// Compressor (CSA, HCA): project `tokens` tokens to KV candidates (c_kv/s wide each) that pool into entries.
KernelCost compressor_cost(const LayerContext& ctx, double tokens);
// Top-k over `scores` fp32 scores: one pass reading them.
KernelCost topk_cost(const LayerContext& ctx, double scores);

// Sparse gather then attention (MoBA blocks, select-then-gather entries): query rank q receives owners[q][o]
// selections of `bytes_per_selection` from every other rank o, once q has passed `ready[q]` and o `owner_ready[o]`;
// then q runs `attention`. Each owner's done set includes the flows it serves. Returns `done` extended.
RankTasks gather_then_attend(LayerContext& ctx, const std::vector<int>& gpus,
                             const std::vector<std::vector<int>>& owners, double bytes_per_selection,
                             const char* flow_name, const RankTasks& ready, const RankTasks& owner_ready,
                             RankTasks done, const char* attention_name, const KernelCost& attention);

// Causal pairs of L local queries each seeing the keys of `entries` evenly spread entries (round-robin layouts:
// on average half of them precede a query): L * entries / 2.
inline double half_pairs(double queries, double entries) { return queries * entries / 2; }

}  // namespace cpsim
