// How one layer's attention is lowered to tasks under CP: a lowering function per (attention kind, CP algorithm),
// registered with its kind (workloads/attention/registry.hpp). Each lowering lives in its kind's folder; the layer
// generator (layer_stack.cpp) calls it between the QKV projection and the output projection of every layer.
#pragma once
#include <string>
#include <vector>

#include "workloads/nccl_collectives.hpp"
#include "workloads/workload.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/roofline.hpp"

namespace cpsim {

// Everything a lowering needs for one layer.
struct LayerContext {
  TaskGraph& graph;
  const WorkloadInputs& in;
  const ShardShape& shape;
  const RankLayout& layout;
  int layer = -1;
  double backward_scale = 1;  // > 1: the backward pass (attention kernels cost this multiple of the forward)
};

// `entry[gpu]`: tasks after which that GPU's Q, K, V exist. Returns per GPU the tasks after which its attention
// output is final. Indexed by global GPU id (RankLayout::gpu).
using AttentionLowering = RankTasks (*)(LayerContext& ctx, const RankTasks& entry);

// FlashAttention's backward (recompute + dQ, dK, dV) costs this multiple of the forward kernel.
constexpr double kBackwardFactor = 2.5;

// Causal attention of rank q's queries against rank kv's keys under the plan's partition (zero flops when masked).
KernelCost dense_attention_block(const LayerContext& ctx, int q_rank, int kv_rank);

// Lowerings (one concept per file, in each kind's folder: dense/ring_attention.cpp, swa/swa_attention.cpp, ...).
RankTasks lower_dense_ring(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_allgather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_ulysses(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_usp(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_usp_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_pass_q(LayerContext& ctx, const RankTasks& entry);
// Training: the backward passes of the dense ring, ulysses and allgather lowerings (dense/train_attention.cpp).
RankTasks lower_dense_ring_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_ulysses_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dense_allgather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_swa_boundary(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_swa_allgather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_hca_local(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_hca_allgather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_csa_allgather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_csa_select_gather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dsa_allgather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dsa_select_gather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_moba_gather(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_linear_lasp1(LayerContext& ctx, const RankTasks& entry);
// Training backward passes of the other kinds (kinds_backward.cpp).
RankTasks lower_swa_boundary_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_swa_allgather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_hca_local_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_hca_allgather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_csa_allgather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dsa_allgather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_csa_select_gather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_dsa_select_gather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_moba_gather_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_linear_lasp1_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_linear_lasp2_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_ssm_lasp1_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_ssm_lasp2_backward(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_linear_lasp2(LayerContext& ctx, const RankTasks& entry);
// Mamba-2 SSM layers (SSD): the same chunked state passing with a [B, H, N, d] state (linear_attention.cpp).
RankTasks lower_ssm_lasp1(LayerContext& ctx, const RankTasks& entry);
RankTasks lower_ssm_lasp2(LayerContext& ctx, const RankTasks& entry);

}  // namespace cpsim
