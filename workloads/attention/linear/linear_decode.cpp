// Linear attention in a decode step: the [B, H, d, d] state after the whole context lives on the tail rank (the end
// of LASP's chain, or of LASP-2's prefix sum). The token updates it (M += k^T v) and reads its output (o = q M) there:
// no communication, and a cost independent of the context length.
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

DecodeAttention decode_linear(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry) {
  const LayerContext& l = ctx.layer;
  const double B = l.in.run.batch, H = l.shape.q_heads, d = l.shape.head_dim, s = l.shape.dtype_bytes;
  const double state = B * H * d * d * s;
  // Update and application: 2 * H * d^2 flops each per sequence; the state is read, written, and read again.
  const double flops = 4 * B * H * d * d, bytes = 3 * state + 3 * B * H * d * s;
  const KernelCost step{kernel_time_s(l.in.gpu, KernelClass::GEMM, l.in.run.dtype, flops, bytes), flops, bytes};
  return decode_on_home(ctx, gpus, entry, {{"state update", step}});
}

}  // namespace cpsim
