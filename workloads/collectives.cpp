#include "workloads/collectives.hpp"

#include <algorithm>

namespace cpsim {

RankTasks run_steps(TaskGraph& g, const std::vector<int>& gpus, const std::vector<std::vector<StepMessage>>& steps,
                    const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  RankTasks frontier = ready;
  for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
    RankTasks next(n);
    std::vector<bool> active(n, false);
    for (const StepMessage& m : steps[step]) {
      const TaskId flow = g.add_flow(gpus[m.from], gpus[m.to], m.bytes, tag.traffic, tag.name, tag.layer, step);
      if (m.overhead_s >= 0) g.set_flow_overhead(flow, m.overhead_s);
      g.depend_all(flow, frontier[m.from]);
      if (m.to != m.from) g.depend_all(flow, frontier[m.to]);
      next[m.from].push_back(flow);
      next[m.to].push_back(flow);
      active[m.from] = active[m.to] = true;
    }
    for (int r = 0; r < n; ++r)
      if (active[r]) frontier[r] = std::move(next[r]);
  }
  return frontier;
}

namespace {

// n-1 steps in which rank r sends `bytes` to rank (r + offset(step)) mod n.
std::vector<std::vector<StepMessage>> shifted_steps(int n, double bytes, bool ring) {
  std::vector<std::vector<StepMessage>> steps(n - 1);
  for (int s = 0; s < n - 1; ++s)
    for (int r = 0; r < n; ++r) steps[s].push_back({r, (r + (ring ? 1 : s + 1)) % n, bytes});
  return steps;
}

}  // namespace

RankTasks ring_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  auto steps = shifted_steps(n, bytes / n, true);
  const auto gather = steps;
  steps.insert(steps.end(), gather.begin(), gather.end());  // reduce-scatter, then all-gather
  return run_steps(g, gpus, steps, tag, ready);
}

RankTasks ring_allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank, const CollectiveTag& tag,
                         const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  return run_steps(g, gpus, shifted_steps(n, bytes_per_rank, true), tag, ready);
}

RankTasks direct_allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank,
                           const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  std::vector<std::vector<StepMessage>> steps(1);
  for (int r = 0; r < n; ++r)
    for (int k = 1; k < n; ++k) steps[0].push_back({r, (r + k) % n, bytes_per_rank});
  return run_steps(g, gpus, steps, tag, ready);
}

RankTasks ring_reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                              const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  return run_steps(g, gpus, shifted_steps(n, bytes / n, true), tag, ready);
}

RankTasks direct_reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                                const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  std::vector<std::vector<StepMessage>> steps(1);
  for (int r = 0; r < n; ++r)
    for (int k = 1; k < n; ++k) steps[0].push_back({r, (r + k) % n, bytes / n});
  return run_steps(g, gpus, steps, tag, ready);
}

RankTasks hierarchical_allgather(TaskGraph& g, const std::vector<int>& gpus, int nodes, double bytes_per_rank,
                                 const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size()), m = n / nodes;
  RankTasks done = ready;
  for (int node = 0; node < nodes; ++node) {  // inside each node
    const std::vector<int> local(gpus.begin() + node * m, gpus.begin() + (node + 1) * m);
    const RankTasks in(done.begin() + node * m, done.begin() + (node + 1) * m);
    const RankTasks out = ring_allgather(g, local, bytes_per_rank, tag, in);
    std::copy(out.begin(), out.end(), done.begin() + node * m);
  }
  for (int i = 0; i < m; ++i) {  // across nodes, rank i of every node
    std::vector<int> ring;
    RankTasks in;
    for (int node = 0; node < nodes; ++node) ring.push_back(gpus[node * m + i]), in.push_back(done[node * m + i]);
    const RankTasks out = ring_allgather(g, ring, m * bytes_per_rank, tag, in);
    for (int node = 0; node < nodes; ++node) done[node * m + i] = out[node];
  }
  return done;
}

RankTasks pairwise_alltoall(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_pair,
                            const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  return run_steps(g, gpus, shifted_steps(n, bytes_per_pair, false), tag, ready);
}

RankTasks pairwise_alltoallv(TaskGraph& g, const std::vector<int>& gpus,
                             const std::vector<std::vector<double>>& bytes, const CollectiveTag& tag,
                             const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  std::vector<std::vector<StepMessage>> steps(n - 1);
  for (int s = 0; s < n - 1; ++s)
    for (int r = 0; r < n; ++r)
      if (const int to = (r + s + 1) % n; bytes[r][to] > 0) steps[s].push_back({r, to, bytes[r][to]});
  return run_steps(g, gpus, steps, tag, ready);
}

int tree_allreduce_steps(int n) {
  int p = 1, levels = 0;
  while (p * 2 <= n) p *= 2, ++levels;
  return levels + (p == n ? 0 : 2);
}

RankTasks tree_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  int p = 1;
  while (p * 2 <= n) p *= 2;
  std::vector<std::vector<StepMessage>> steps;
  if (p < n) {  // fold the ranks beyond the largest power of two into the butterfly
    steps.emplace_back();
    for (int r = p; r < n; ++r) steps.back().push_back({r, r - p, bytes});
  }
  for (int mask = 1; mask < p; mask *= 2) {
    steps.emplace_back();
    for (int r = 0; r < p; ++r) steps.back().push_back({r, r ^ mask, bytes});
  }
  if (p < n) {
    steps.emplace_back();
    for (int r = p; r < n; ++r) steps.back().push_back({r - p, r, bytes});
  }
  return run_steps(g, gpus, steps, tag, ready);
}

}  // namespace cpsim
