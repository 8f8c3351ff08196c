#include "workloads/gradient_sync.hpp"

#include "workloads/memory.hpp"

namespace cpsim {

void add_gradient_sync(TaskGraph& g, const WorkloadInputs& in, const RankLayout& layout,
                       const std::vector<LayerGradients>& grads, std::size_t replica_tasks) {
  const int dp = in.parallel.simulated_dp, used = layout.used_gpus();
  const bool experts_over_cp = in.parallel.ep > in.parallel.tp;
  struct Bucket {
    int layer;
    const RankTasks* done;
    double replicated_bytes = 0, expert_bytes = 0;
  };
  std::vector<Bucket> buckets;
  for (int l = in.model.layers - 1; l >= 0; --l) {
    const LayerWeightBytes w = layer_weight_bytes(in, l);
    const double expert = experts_over_cp ? w.routed_experts : 0.0;
    if (in.parallel.grad_sync == GradSync::OVERLAP || buckets.empty()) buckets.push_back({grads[l].layer, &grads[l].done});
    buckets.back().replicated_bytes += w.total - expert;
    buckets.back().expert_bytes += expert;
  }
  if (in.parallel.grad_sync == GradSync::END) buckets.back().done = &grads[0].done;  // after the whole backward

  // An all-reduce over (replica, GPU of replica 0) members, each entering when its copy of the bucket is done.
  auto bucket_allreduce = [&](const Bucket& b, const std::vector<std::pair<int, int>>& members, double bytes,
                       const char* name) {
    if (members.size() < 2 || bytes <= 0) return;
    std::vector<int> group;
    RankTasks ready;
    for (const auto& [replica, local] : members) {
      group.push_back(replica * used + local);
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
