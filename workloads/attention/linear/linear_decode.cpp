// Linear attention in a decode step: the [B, H, d, d] state after the whole context lives on the tail rank (the end
// of LASP's chain, or of LASP-2's prefix sum). The token updates it (M += k^T v) and reads its output (o = q M) there:
// no communication, and a cost independent of the context length. A Mamba-2 SSM layer's [N, d] state likewise.
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

namespace {

// A [dk, d] state per head: update and application, 2 * H * dk * d flops each per sequence; the state is read,
// written, and read again.
DecodeAttention state_step(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry, double dk) {
  const LayerContext& l = ctx.layer;
  const double B = l.in.run.batch, H = l.shape.q_heads, d = l.shape.head_dim, s = l.shape.dtype_bytes;
  const double state = B * H * dk * d * s;
  const double flops = 4 * B * H * dk * d, bytes = 3 * state + B * H * (2 * dk + d) * s;
  const KernelCost step{kernel_time_s(l.in.gpu, KernelClass::GEMM, l.in.run.dtype, flops, bytes), flops, bytes};
  return decode_on_home(ctx, gpus, entry, {{"state update", step}});
}

}  // namespace

DecodeAttention decode_linear(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  return state_step(ctx, gpus, entry, ctx.layer.shape.head_dim);
}
DecodeAttention decode_ssm(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  return state_step(ctx, gpus, entry, ctx.layer.in.model.attention.ssm_state_dim);
}

}  // namespace cpsim
