// Repetition of graph stretches (TaskGraph::mark / repeats / repeat, task_graph.hpp): a model's layers are usually
// the same layer many times, and building each one again (every GPU's tasks, costs and, collapsed, hashes) was most
// of the time of a large run. Once two consecutive stretches are seen to be one another moved, the rest are copies.
#include <fmt/format.h>

#include "workloads/task_graph.hpp"

namespace cpsim {

TaskGraph::Mark TaskGraph::mark() const {
  check_open();
  Mark m{tasks_.size(), edges_.size(), shadows_.size(), layers_.size(), owned_, gpu_hash_, last_compute_};
  return m;
}

bool TaskGraph::is_moved(TaskId earlier, TaskId later, const Mark& a, const Mark& b) const {
  const bool shadow = earlier & kShadow;
  if (shadow != bool(later & kShadow)) return false;
  if (!shadow) return later == earlier + (b.tasks - a.tasks);
  const Shadow &e = shadows_[earlier & ~kShadow], &l = shadows_[later & ~kShadow];
  return e.gpu == l.gpu && l.seq == e.seq + (b.owned[e.gpu] - a.owned[e.gpu]);
}

bool TaskGraph::repeats(const Mark& a, const Mark& b, int model_layer_step) const {
  const Mark now = mark();
  const std::size_t n = b.tasks - a.tasks, layer_step = b.layers - a.layers;
  if (n == 0 || now.tasks - b.tasks != n || now.edges - b.edges != b.edges - a.edges ||
      now.layers - b.layers != layer_step || now.shadows - b.shadows != b.shadows - a.shadows ||
      a.edges < resolved_edges_)
    return false;
  if (symmetry_) {  // every GPU built the same (rotated) as its representative, in the stretch and before it
    for (int gpu = 0; gpu < gpu_count_; ++gpu) {
      const int rep = symmetry_->representative(gpu);
      if (now.owned[gpu] - b.owned[gpu] != b.owned[gpu] - a.owned[gpu] || now.owned[gpu] != now.owned[rep] ||
          now.hash[gpu] != now.hash[rep] || b.owned[gpu] != b.owned[rep] || b.hash[gpu] != b.hash[rep])
        return false;
    }
  }
  for (std::size_t i = 0; i < layer_step; ++i) {
    const LayerInfo &x = layers_[a.layers + i], &y = layers_[b.layers + i];
    if (std::size_t(y.index - x.index) != layer_step || y.kinds != x.kinds || y.algorithms != x.algorithms ||
        y.backward != x.backward || y.place.decode_step != x.place.decode_step ||
        y.place.micro_batch != x.place.micro_batch || y.place.stage != x.place.stage ||
        y.place.model_layer != (x.place.model_layer < 0 ? x.place.model_layer : x.place.model_layer + model_layer_step))
      return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Task &x = tasks_[a.tasks + i], &y = tasks_[b.tasks + i];
    if (y.kind != x.kind || y.traffic != x.traffic || y.name != x.name || y.gpu != x.gpu || y.peer != x.peer ||
        y.layer != (x.layer < 0 ? x.layer : x.layer + int(layer_step)) || y.step != x.step ||
        y.duration_s != x.duration_s || y.flops != x.flops || y.bytes != x.bytes ||
        y.predecessor_count != x.predecessor_count)
      return false;
  }
  for (std::size_t i = 0; i < b.edges - a.edges; ++i) {
    const auto &x = edges_[a.edges + i], &y = edges_[b.edges + i];
    if (x.second < a.tasks || y.second != x.second + n || !is_moved(x.first, y.first, a, b)) return false;
  }
  for (std::size_t i = 0; i < b.shadows - a.shadows; ++i) {
    const Shadow &x = shadows_[a.shadows + i], &y = shadows_[b.shadows + i];
    if (y.gpu != x.gpu || y.seq != x.seq + (b.owned[x.gpu] - a.owned[x.gpu])) return false;
  }
  for (int gpu = 0; gpu < gpu_count_; ++gpu) {  // each stream's tail moved with its stretch
    const std::int64_t x = b.last_compute[gpu], y = now.last_compute[gpu];
    if ((x < 0) != (y < 0) || (x >= 0 && !is_moved(TaskId(x), TaskId(y), a, b))) return false;
  }
  return true;
}

void TaskGraph::reserve_repeats(const Mark& from, std::size_t copies) {
  const std::size_t n = tasks_.size() - from.tasks, e = edges_.size() - from.edges;
  tasks_.reserve(tasks_.size() + copies * n);
  edges_.reserve(edges_.size() + copies * e);
  if (!symmetry_) return;
  kept_seq_.reserve(kept_seq_.size() + copies * n);
  for (int gpu = 0; gpu < gpu_count_; ++gpu)
    if (symmetry_->is_representative(gpu))
      kept_by_seq_[gpu].reserve(kept_by_seq_[gpu].size() + copies * (owned_[gpu] - from.owned[gpu]));
}

TaskId TaskGraph::moved(TaskId id, const Mark& from, const Mark& to) {
  if (!(id & kShadow)) return id + static_cast<TaskId>(to.tasks - from.tasks);
  const Shadow s = shadows_[id & ~kShadow];
  shadows_.push_back({s.gpu, s.seq + (to.owned[s.gpu] - from.owned[s.gpu])});
  return kShadow | static_cast<TaskId>(shadows_.size() - 1);
}

void TaskGraph::repeat(const Mark& from, int model_layer_step) {
  const Mark to = mark();
  const std::size_t n = to.tasks - from.tasks, layer_step = to.layers - from.layers;
  if (tasks_.size() + n > task_limit_)
    throw WorkloadTooLarge(fmt::format("the workload passed {} tasks (run.max_tasks)", task_limit_));
  if (symmetry_) {  // copies point at kept tasks only: resolve the shadows the stretch (and those before) refer to
    for (std::size_t e = resolved_edges_; e < edges_.size(); ++e) edges_[e].first = resolve(edges_[e].first);
  }
  for (std::size_t i = from.layers; i < to.layers; ++i) {
    LayerInfo info = layers_[i];
    info.index += static_cast<int>(layer_step);
    if (info.place.model_layer >= 0) info.place.model_layer += model_layer_step;
    layers_.push_back(std::move(info));
  }
  for (std::size_t i = from.tasks; i < to.tasks; ++i) {
    Task t = tasks_[i];
    if (t.layer >= 0) t.layer += static_cast<int>(layer_step);
    if (t.kind == TaskKind::FLOW) ++flow_count_;
    if (symmetry_) {
      kept_seq_.push_back(kept_seq_[i] + (to.owned[t.gpu] - from.owned[t.gpu]));
      kept_by_seq_[t.gpu].push_back(static_cast<TaskId>(tasks_.size()));
    }
    tasks_.push_back(t);
  }
  for (std::size_t e = from.edges; e < to.edges; ++e)
    edges_.emplace_back(edges_[e].first + static_cast<TaskId>(n), edges_[e].second + static_cast<TaskId>(n));
  if (symmetry_) {
    resolved_edges_ = edges_.size();
    for (int gpu = 0; gpu < gpu_count_; ++gpu) owned_[gpu] += to.owned[gpu] - from.owned[gpu];
  }
  for (auto& last : last_compute_)
    if (last >= 0) last = moved(static_cast<TaskId>(last), from, to);
  repeated_tasks_ += n;
}

}  // namespace cpsim
