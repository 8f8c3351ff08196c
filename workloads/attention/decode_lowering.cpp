#include "workloads/attention/decode_lowering.hpp"

#include "workloads/cp_group_lowering.hpp"

namespace cpsim {

int decode_home_rank(DecodeHome home, int step, int cp) {
  switch (home) {
    case DecodeHome::EVERY_RANK: return -1;
    case DecodeHome::STEP_OWNER: return step % cp;
    case DecodeHome::TAIL_RANK: break;
  }
  return cp - 1;
}

DecodeAttention decode_on_home(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry,
                               const std::vector<NamedKernel>& kernels) {
  DecodeAttention out{entry, std::nullopt, 0};
  std::vector<TaskId> after = entry[ctx.home];
  int step = 0;
  for (const NamedKernel& k : kernels) after = {add_kernel(ctx.layer, gpus[ctx.home], k.name, step++, k.cost, after)};
  out.pending[ctx.home] = after;
  return out;
}

KernelCost decode_attention_cost(const DecodeContext& ctx, double keys) {
  const double B = ctx.layer.in.run.batch;
  return attention_pairs_cost(ctx.layer, B * keys, B, B * keys);
}

}  // namespace cpsim
