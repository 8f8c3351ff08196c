// Linear attention / SSM under CP (heterogeneous-attention-cp.md, "线性注意力 / SSM 的 CP 为什么传状态而非 KV"):
// every rank's block reduces to a [B, H, d, d] state M_r = K_r^T V_r; output O_r = Q_r M_{1:r-1} + the rank's own
// causal part.
//   lasp1: the prefix state travels rank to rank: rank r waits for M_{1:r-1} from r-1, adds M_r, sends M_{1:r}
//          on: N-1 serial P2P steps of B*H*d^2*s.
//   lasp2: one AllGather of every rank's M_r (node-aware, gather_states), then a local prefix sum; the AllGather
//          overlaps the rank's own causal part. Bytes per rank: (N-1) * B*H*d^2*s, independent of S.
// The rank's own causal part runs as Lightning Attention / LASP-2 do: chunks of C = attention.linear_chunk tokens,
// each a masked dense C x C block (L/C chunks of C^2 pairs per sequence), plus the chunk recurrence (state update
// K_c^T V_c and state application Q_c M_{<c}: d x d per head per chunk), so its cost is linear in L = S/N.
// H and d are this GPU's heads (n_heads / tp) and head_dim. A Mamba-2 SSM layer (SSD, the seed's last section) runs
// the same chunked algorithm with a [N, d] state per head (N = attention.ssm_state_dim): its intra-chunk part is the
// structured masked attention the SSD duality names, its state passing LASP's (ssm/lasp1 and ssm/lasp2).
#include <algorithm>
#include <map>

#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

// A state of dk x d per head: dk = d for linear attention ([d, d], K^T V), dk = N for a Mamba-2 SSM ([N, d], B^T X).
struct LinearDims {
  double B, L, T, H, d, dk, s, state_bytes, chunk;
};
LinearDims linear_dims(const LayerContext& ctx, double dk) {
  const double B = ctx.in.run.batch, L = double(ctx.in.run.seq_len) / ctx.in.parallel.cp;
  const double H = ctx.shape.q_heads, d = ctx.shape.head_dim, s = ctx.shape.dtype_bytes;
  const double chunk = std::min(L, double(ctx.in.model.attention.linear_chunk));
  return {B, L, B * L, H, d, dk, s, B * H * dk * d * s, chunk};
}
LinearDims linear_dims(const LayerContext& ctx) { return linear_dims(ctx, ctx.shape.head_dim); }
LinearDims ssm_dims(const LayerContext& ctx) { return linear_dims(ctx, ctx.in.model.attention.ssm_state_dim); }

// K^T V (state update) or Q M (state application) over the rank's T tokens, chunk by chunk: 2 * T * H * dk * d
// flops; reads the two [T, H, dk] and [T, H, d] operands and the state.
KernelCost state_gemm(const LayerContext& ctx, const LinearDims& x) {
  const double flops = 2 * x.T * x.H * x.dk * x.d;
  const double bytes = (x.T * x.H * (x.dk + x.d)) * x.s + x.state_bytes;
  return {kernel_time_s(ctx.in.gpu, KernelClass::GEMM, ctx.in.run.dtype, flops, bytes), flops, bytes};
}

// Masked dense attention inside each chunk: L/C chunks of C^2 pairs per sequence = B * L * C pairs.
KernelCost intra_chunk(const LayerContext& ctx, const LinearDims& x) {
  return attention_pairs_cost(ctx, x.B * x.L * x.chunk, x.T, x.T);
}

// What a rank computes from its own tokens alone: the chunk states (then summed into M_r), the intra-chunk blocks and
// the state application of its own earlier chunks. Returns {state, own causal part}.
std::pair<TaskId, TaskId> local_part(LayerContext& ctx, int gpu, const LinearDims& x, const std::vector<TaskId>& in) {
  const TaskId state = add_kernel(ctx, gpu, "chunk state", 0, state_gemm(ctx, x), in);
  add_kernel(ctx, gpu, "intra-chunk attention", 1, intra_chunk(ctx, x), {state});
  const TaskId own = add_kernel(ctx, gpu, "local inter-chunk", 1, state_gemm(ctx, x), {state});
  return {state, own};
}

// LASP-2's AllGather of the states as NCCL runs it across nodes: when the CP group spans k nodes of m ranks each,
// first a ring all-gather across nodes between the ranks of the same local index (each NIC carries k-1 single
// states), then a ring all-gather inside each node of the k states each rank now holds (over NVLink). A single ring
// would push all N-1 states through every NIC in N-1 lock-step steps. Bytes per rank: (k-1)b + (m-1)kb = (N-1)b.
RankTasks gather_states(LayerContext& ctx, const std::vector<int>& gpus, double bytes, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size()), per_node = ctx.in.parallel.gpus_per_node;
  std::map<int, std::vector<int>> by_node;  // node -> positions in the group
  for (int i = 0; i < n; ++i) by_node[per_node > 0 ? gpus[i] / per_node : 0].push_back(i);
  const int k = static_cast<int>(by_node.size()), m = static_cast<int>(by_node.begin()->second.size());
  bool even = k > 1;
  for (const auto& [node, pos] : by_node) even = even && static_cast<int>(pos.size()) == m;
  const CollectiveTag tag{Traffic::CP, "lasp2 state allgather", ctx.layer};
  if (!even) return allgather(ctx.graph, gpus, bytes, tag, ready);
  // Runs `gather` over groups of positions and scatters the per-position results back.
  auto over = [&](const std::vector<std::vector<int>>& groups, double block, const RankTasks& in) {
    RankTasks out(n);
    for (const auto& group : groups) {
      std::vector<int> group_gpus;
      RankTasks group_in;
      for (int p : group) group_gpus.push_back(gpus[p]), group_in.push_back(in[p]);
      const RankTasks done = allgather(ctx.graph, group_gpus, block, tag, group_in);
      for (std::size_t i = 0; i < group.size(); ++i) out[group[i]] = done[i];
    }
    return out;
  };
  std::vector<std::vector<int>> rails(m), nodes;
  for (const auto& [node, pos] : by_node) {
    for (int j = 0; j < m; ++j) rails[j].push_back(pos[j]);
    nodes.push_back(pos);
  }
  return over(nodes, k * bytes, over(rails, bytes, ready));
}

RankTasks lasp2(LayerContext& ctx, const RankTasks& entry, const LinearDims& x) {
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks states(n);
    std::vector<TaskId> own(n);
    for (int r = 0; r < n; ++r) {
      const auto [state, local] = local_part(ctx, gpus[r], x, in[r]);
      states[r] = {state};
      own[r] = local;
    }
    const RankTasks gathered = gather_states(ctx, gpus, x.state_bytes, states);
    RankTasks done(n);
    for (int r = 0; r < n; ++r) {
      std::vector<TaskId> after = gathered[r];
      after.push_back(own[r]);
      const TaskId prefix = add_kernel(ctx, gpus[r], "state prefix sum", 2, memory_pass_cost(ctx, n * x.state_bytes), after);
      done[r] = gathered[r];
      done[r].push_back(add_kernel(ctx, gpus[r], "inter-chunk output", 2, state_gemm(ctx, x), {prefix}));
    }
    return done;
  });
}

RankTasks lasp1(LayerContext& ctx, const RankTasks& entry, const LinearDims& x) {
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks done(n);
    std::vector<TaskId> prefix_ready(n);  // per rank: M_{1:r} is complete
    for (int r = 0; r < n; ++r) {
      const auto [state, own] = local_part(ctx, gpus[r], x, in[r]);
      std::vector<TaskId> after = {state, own};
      if (r > 0) {  // the serial chain: M_{1:r-1} exists only once rank r-1 has received and extended its prefix
        const TaskId f = ctx.graph.add_flow(gpus[r - 1], gpus[r], x.state_bytes, Traffic::CP, "lasp1 state", ctx.layer, r);
        ctx.graph.depend(f, prefix_ready[r - 1]);
        ctx.graph.depend_all(f, in[r]);
        after.push_back(f);
        done[r - 1].push_back(f);
      }
      prefix_ready[r] = add_kernel(ctx, gpus[r], "state prefix sum", 2, memory_pass_cost(ctx, 2 * x.state_bytes), after);
      done[r].push_back(add_kernel(ctx, gpus[r], "inter-chunk output", 2, state_gemm(ctx, x), {prefix_ready[r]}));
    }
    return done;
  });
}

}  // namespace

RankTasks lower_linear_lasp1(LayerContext& ctx, const RankTasks& entry) { return lasp1(ctx, entry, linear_dims(ctx)); }
RankTasks lower_linear_lasp2(LayerContext& ctx, const RankTasks& entry) { return lasp2(ctx, entry, linear_dims(ctx)); }
RankTasks lower_ssm_lasp1(LayerContext& ctx, const RankTasks& entry) { return lasp1(ctx, entry, ssm_dims(ctx)); }
RankTasks lower_ssm_lasp2(LayerContext& ctx, const RankTasks& entry) { return lasp2(ctx, entry, ssm_dims(ctx)); }

}  // namespace cpsim
