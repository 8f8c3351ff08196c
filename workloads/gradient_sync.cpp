#include "workloads/gradient_sync.hpp"

#include <algorithm>

#include "workloads/memory.hpp"

namespace cpsim {

void add_gradient_sync(TaskGraph& g, const WorkloadInputs& in, const RankLayout& layout,
                       const std::vector<LayerGradients>& grads, std::size_t replica_tasks) {
  const int dp = in.parallel.simulated_dp;
  const bool experts_over_cp = in.parallel.ep > in.parallel.tp;
  struct Bucket {
    int layer;
    const RankTasks* done;
    int gpu_base = 0;
    double replicated_bytes = 0, expert_bytes = 0;
  };
  std::vector<Bucket> buckets;  // `end`: one per pipeline stage, in order of first appearance
  for (int l = in.model.layers - 1; l >= 0; --l) {
    const LayerWeightBytes w = layer_weight_bytes(in, l);
    const double expert = experts_over_cp ? w.routed_experts : 0.0;
    auto bucket = std::find_if(buckets.begin(), buckets.end(), [&](const Bucket& b) { return b.gpu_base == grads[l].gpu_base; });
    if (in.parallel.grad_sync == GradSync::OVERLAP || bucket == buckets.end())
      bucket = buckets.insert(buckets.end(), {grads[l].layer, &grads[l].done, grads[l].gpu_base});
    // `end`: after the stage's whole backward, whose lowest layer runs last.
    if (in.parallel.grad_sync == GradSync::END) bucket->done = &grads[l].done;
    bucket->replicated_bytes += w.total - expert;
    bucket->expert_bytes += expert;
  }

  // An all-reduce over (replica, GPU of replica 0) members, each entering when its copy of the bucket is done.
  auto bucket_allreduce = [&](const Bucket& b, const std::vector<std::pair<int, int>>& members, double bytes,
                       const char* name) {
    if (members.size() < 2 || bytes <= 0) return;
    std::vector<int> group;
    RankTasks ready;
    for (const auto& [replica, local] : members) {
      group.push_back(replica * layout.replica_stride() + b.gpu_base + local);
      ready.emplace_back();
      for (TaskId t : (*b.done)[local]) ready.back().push_back(static_cast<TaskId>(t + replica * replica_tasks));
    }
    allreduce(g, group, bytes, {Traffic::DP, name, b.layer}, ready);
  };
  for (const Bucket& b : buckets)
    for (int t = 0; t < in.parallel.tp; ++t) {
      std::vector<std::pair<int, int>> dp_cp;
      for (int r = 0; r < dp; ++r)
        for (int c = 0; c < in.parallel.cp; ++c) dp_cp.emplace_back(r, layout.gpu(c, t));
      bucket_allreduce(b, dp_cp, b.replicated_bytes, "dp grad allreduce");
      for (int c = 0; c < in.parallel.cp; ++c) {
        std::vector<std::pair<int, int>> dp_only;
        for (int r = 0; r < dp; ++r) dp_only.emplace_back(r, layout.gpu(c, t));
        bucket_allreduce(b, dp_only, b.expert_bytes, "dp expert grad allreduce");
      }
    }
}

}  // namespace cpsim
