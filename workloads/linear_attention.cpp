// Linear attention / SSM under CP (heterogeneous-attention-cp.md, "线性注意力 / SSM 的 CP 为什么传状态而非 KV"):
// every rank's chunk reduces to a [B, H, d, d] state M_t = K_t^T V_t; output O_t = Q_t M_{1:t-1} + intra-chunk
// causal attention.
//   lasp1: the prefix state travels rank to rank: rank r waits for M_{1:r-1} from r-1, adds M_r, sends M_{1:r}
//          on: N-1 serial P2P steps of B*H*d^2*s.
//   lasp2: one AllGather of every rank's M_t, then a local prefix sum; the AllGather overlaps the intra-chunk
//          attention. Bytes per rank: (N-1) * B*H*d^2*s, independent of S.
// H and d are this GPU's heads (n_heads / tp) and head_dim.
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {
namespace {

struct LinearDims {
  double B, L, T, H, d, s, state_bytes;
};
LinearDims linear_dims(const LayerContext& ctx) {
  const double B = ctx.in.run.batch, L = double(ctx.in.run.seq_len) / ctx.in.parallel.cp;
  const double H = ctx.shape.q_heads, d = ctx.shape.head_dim, s = ctx.shape.dtype_bytes;
  return {B, L, B * L, H, d, s, B * H * d * d * s};
}

// K^T V (or Q M): 2 * T * H * d^2 flops.
KernelCost state_gemm(const LayerContext& ctx, const LinearDims& x) {
  const double flops = 2 * x.T * x.H * x.d * x.d;
  const double bytes = (2 * x.T * x.H * x.d) * x.s + x.state_bytes;
  return {kernel_time_s(ctx.in.gpu, KernelClass::GEMM, ctx.in.run.dtype, flops, bytes), flops, bytes};
}

// Causal attention inside the chunk: L(L+1)/2 pairs per sequence.
KernelCost intra_chunk(const LayerContext& ctx, const LinearDims& x) {
  return attention_pairs_cost(ctx, x.B * x.L * (x.L + 1) / 2, x.T, x.T);
}

}  // namespace

RankTasks lower_linear_lasp2(LayerContext& ctx, const RankTasks& entry) {
  const LinearDims x = linear_dims(ctx);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks states(n);
    for (int r = 0; r < n; ++r) states[r] = {add_kernel(ctx, gpus[r], "chunk state", 0, state_gemm(ctx, x), in[r])};
    const RankTasks gathered =
        ring_allgather(ctx.graph, gpus, x.state_bytes, {Traffic::CP, "lasp2 state allgather", ctx.layer}, states);
    RankTasks done(n);
    for (int r = 0; r < n; ++r) {
      const TaskId intra = add_kernel(ctx, gpus[r], "intra-chunk attention", 1, intra_chunk(ctx, x), states[r]);
      std::vector<TaskId> after = gathered[r];
      after.push_back(intra);
      const TaskId prefix = add_kernel(ctx, gpus[r], "state prefix sum", 2, memory_pass_cost(ctx, n * x.state_bytes), after);
      done[r] = gathered[r];
      done[r].push_back(add_kernel(ctx, gpus[r], "inter-chunk output", 2, state_gemm(ctx, x), {prefix}));
    }
    return done;
  });
}

RankTasks lower_linear_lasp1(LayerContext& ctx, const RankTasks& entry) {
  const LinearDims x = linear_dims(ctx);
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    RankTasks done(n);
    std::vector<TaskId> prefix_ready(n);  // per rank: M_{1:r} is complete
    for (int r = 0; r < n; ++r) {
      const TaskId state = add_kernel(ctx, gpus[r], "chunk state", 0, state_gemm(ctx, x), in[r]);
      const TaskId intra = add_kernel(ctx, gpus[r], "intra-chunk attention", 1, intra_chunk(ctx, x), {state});
      std::vector<TaskId> after = {state, intra};
      if (r > 0) {
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

}  // namespace cpsim
