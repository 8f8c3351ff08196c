#include "workloads/tp_comm_overlap.hpp"

namespace cpsim {
namespace {

TaskId chunk_kernel(TaskGraph& g, int gpu, const ChunkedGemm& gemm, int step, const std::vector<TaskId>& after) {
  const TaskId t = g.add_compute(gpu, gemm.name, gemm.layer, step, gemm.chunk.duration_s, gemm.chunk.flops,
                                 gemm.chunk.hbm_bytes);
  g.depend_all(t, after);
  return t;
}

}  // namespace

RankTasks allgather_overlapped(TaskGraph& g, const std::vector<int>& group, double shard_bytes,
                               const ChunkedGemm& gemm, const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(group.size());
  RankTasks done(n);
  std::vector<std::vector<TaskId>> holds = ready;  // per rank: what makes the shard of this step available
  for (int k = 0; k < n; ++k) {
    std::vector<std::vector<TaskId>> next(n);
    if (k + 1 < n)
      for (int i = 0; i < n; ++i) {  // forward the shard held at step k; the receiver's buffer is free from the start
        const int right = (i + 1) % n;
        const TaskId f = g.add_flow(group[i], group[right], shard_bytes, tag.traffic, tag.name, tag.layer, k);
        g.depend_all(f, holds[i]);
        if (k == 0) g.depend_all(f, ready[right]);
        next[right] = {f};
        done[i].push_back(f);
      }
    for (int i = 0; i < n; ++i) {
      const TaskId c = chunk_kernel(g, group[i], gemm, k, holds[i]);
      if (k + 1 == n) done[i].push_back(c);
    }
    if (k + 1 < n) holds = std::move(next);
  }
  return done;
}

RankTasks reduce_scatter_overlapped(TaskGraph& g, const std::vector<int>& group, double shard_bytes,
                                    const ChunkedGemm& gemm, const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(group.size());
  RankTasks done(n);
  std::vector<std::vector<TaskId>> received(n);  // per rank: the partial sum that arrived at the previous step
  for (int k = 0; k < n; ++k) {
    std::vector<std::vector<TaskId>> next(n);
    for (int i = 0; i < n; ++i) {
      // The GEMM chunks run back to back on the compute stream; the communication kernel adds the partial it
      // received to the chunk's product and forwards the sum, so only the flows wait for each other.
      const TaskId c = chunk_kernel(g, group[i], gemm, k, ready[i]);
      if (k + 1 == n) {
        done[i].push_back(c);
        done[i].insert(done[i].end(), received[i].begin(), received[i].end());
        continue;
      }
      const int right = (i + 1) % n;
      const TaskId f = g.add_flow(group[i], group[right], shard_bytes, tag.traffic, tag.name, tag.layer, k);
      g.depend(f, c);
      g.depend_all(f, received[i]);
      if (k == 0) g.depend_all(f, ready[right]);
      next[right] = {f};
      done[i].push_back(f);
    }
    received = std::move(next);
  }
  return done;
}

}  // namespace cpsim
