// Repetition of graph stretches (TaskGraph::mark / repeats / repeat, task_graph.hpp): a model's layers are usually
// the same layer many times, and building each one again (every GPU's tasks, costs and, collapsed, hashes) was most
// of the time of a large run. Once two consecutive stretches are seen to be one another moved, the rest are copies.
#include <algorithm>

#include <fmt/format.h>

#include "workloads/task_graph.hpp"

namespace cpsim {

TaskGraph::Mark TaskGraph::mark() const {
  check_open();
  Mark m{task_count_, edges_.size(), shadows_.size(), layers_.size(), owned_, gpu_hash_, last_compute_};
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
      a.edges < resolved_edges_ || (!runs_.empty() && a.tasks < runs_.back().end()))  // both stretches stored
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
    const Task &x = tasks_[slot(TaskId(a.tasks + i))], &y = tasks_[slot(TaskId(b.tasks + i))];
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

TaskId TaskGraph::moved(TaskId id, const Mark& from, const Mark& to) {
  if (!(id & kShadow)) return id + static_cast<TaskId>(to.tasks - from.tasks);
  const Shadow s = shadows_[id & ~kShadow];
  shadows_.push_back({s.gpu, s.seq + (to.owned[s.gpu] - from.owned[s.gpu])});
  return kShadow | static_cast<TaskId>(shadows_.size() - 1);
}

void TaskGraph::repeat(const Mark& from, int model_layer_step) {
  check_open();
  const Mark to = mark();
  const std::size_t n = to.tasks - from.tasks, layer_step = to.layers - from.layers;
  if (task_count_ + n > task_limit_)
    throw WorkloadTooLarge(fmt::format("the workload passed {} tasks (run.max_tasks)", task_limit_));
  // The stretch is the run's last copy (nothing added since): one more copy of the run's source.
  const bool extends = !runs_.empty() && runs_.back().end() == task_count_ && runs_.back().length == n &&
                       from.tasks + n == task_count_ && runs_.back().slot_end == tasks_.size() &&
                       runs_.back().edge_mark == edges_.size() && runs_.back().layer_step == int(layer_step);
  if (!extends) {
    if (n == 0 || (!runs_.empty() && from.tasks < runs_.back().end()))
      throw std::logic_error("repeat() of a stretch that is not stored");
    if (symmetry_) {  // copies point at kept tasks only: resolve the shadows the stretch (and those before) refer to
      for (std::size_t e = resolved_edges_; e < edges_.size(); ++e) edges_[e].first = resolve(edges_[e].first);
      resolved_edges_ = edges_.size();
    }
    RepeatRun r;
    r.first = static_cast<TaskId>(task_count_);
    r.source_slot = slot(static_cast<TaskId>(from.tasks));
    r.length = static_cast<std::uint32_t>(n);
    r.layer_step = static_cast<int>(layer_step);
    r.slot_end = tasks_.size();
    r.edge_mark = edges_.size();
    r.edges.assign(edges_.begin() + static_cast<std::ptrdiff_t>(from.edges), edges_.end());
    r.lowest_prerequisite = r.first;
    for (const auto& [p, t] : r.edges) r.lowest_prerequisite = std::min(r.lowest_prerequisite, p);
    r.by_prerequisite.assign(r.first - r.lowest_prerequisite + 1, 0);
    for (const auto& [p, t] : r.edges) ++r.by_prerequisite[p - r.lowest_prerequisite + 1];
    for (std::size_t i = 1; i < r.by_prerequisite.size(); ++i) r.by_prerequisite[i] += r.by_prerequisite[i - 1];
    r.edge_of.resize(r.edges.size());
    std::vector<std::uint32_t> next(r.by_prerequisite.begin(), r.by_prerequisite.end() - 1);
    for (std::size_t e = 0; e < r.edges.size(); ++e)
      r.edge_of[next[r.edges[e].first - r.lowest_prerequisite]++] = static_cast<std::uint32_t>(e);
    if (symmetry_) {
      r.owned_per_copy.resize(gpu_count_);
      r.first_seq = owned_;
      r.kept_source_index.assign(gpu_count_, 0);
      for (int gpu = 0; gpu < gpu_count_; ++gpu) {
        r.owned_per_copy[gpu] = to.owned[gpu] - from.owned[gpu];
        if (symmetry_->is_representative(gpu)) r.kept_source_index[gpu] = kept_by_seq_[gpu].size() - r.owned_per_copy[gpu];
      }
    }
    runs_.push_back(std::move(r));
  }
  RepeatRun& r = runs_.back();
  ++r.copies;
  for (std::size_t i = from.layers; i < to.layers; ++i) {
    LayerInfo info = layers_[i];
    info.index += static_cast<int>(layer_step);
    if (info.place.model_layer >= 0) info.place.model_layer += model_layer_step;
    layers_.push_back(std::move(info));
  }
  for (std::size_t i = 0; i < n; ++i) flow_count_ += tasks_[r.source_slot + i].kind == TaskKind::FLOW;
  task_count_ += n;
  copied_edges_ += r.edges.size();
  if (symmetry_)
    for (int gpu = 0; gpu < gpu_count_; ++gpu) owned_[gpu] += r.owned_per_copy[gpu];
  for (auto& last : last_compute_)
    if (last >= 0) last = moved(static_cast<TaskId>(last), from, to);
  repeated_tasks_ += n;
  index_fresh_ = false;
}

// Where ids sit: stored tasks in id order, each run's copies between them.
const TaskGraph::RepeatRun* TaskGraph::run_of(TaskId id) const {
  if (runs_.empty() || id < runs_.front().first) return nullptr;
  if (runs_.size() == 1) return id < runs_.front().end() ? &runs_.front() : nullptr;
  auto it = std::upper_bound(runs_.begin(), runs_.end(), id, [](TaskId v, const RepeatRun& r) { return v < r.first; });
  --it;
  return id < it->end() ? &*it : nullptr;
}

std::size_t TaskGraph::slot(TaskId id) const {
  std::size_t copied = 0;
  for (const RepeatRun& r : runs_) {
    if (id < r.first) break;
    copied += std::size_t(r.length) * r.copies;
  }
  return id - copied;
}

// Where a task is kept: copy `copy` (0 = stored) of the task in tasks_[slot].
TaskGraph::Placement TaskGraph::placement(TaskId id) const {
  const RepeatRun* r = run_of(id);
  if (!r) return {slot(id), 0, nullptr};
  const std::uint32_t offset = id - r->first;
  return {r->source_slot + offset % r->length, offset / r->length + 1, r};
}

Task TaskGraph::task_beyond_first_run(TaskId id) const {
  const Placement p = placement(id);
  Task t = tasks_[p.slot];
  if (p.run && t.layer >= 0) t.layer += static_cast<int>(p.copy) * p.run->layer_step;
  return t;
}

std::uint32_t TaskGraph::kept_seq_of(TaskId id) const {
  const Placement p = placement(id);
  return kept_seq_[p.slot] + (p.run ? p.copy * p.run->owned_per_copy[tasks_[p.slot].gpu] : 0);
}

TaskId TaskGraph::kept_by_seq(int rep, std::uint32_t seq) const {
  std::uint32_t copied = 0;  // seqs of rep's copied tasks before `seq`
  for (const RepeatRun& r : runs_) {
    const std::uint32_t per_copy = r.owned_per_copy[rep], low = r.first_seq[rep], high = low + per_copy * r.copies;
    if (seq < low) break;
    if (seq < high) {
      const std::uint32_t copy = (seq - low) / per_copy + 1;
      return kept_by_seq_[rep][r.kept_source_index[rep] + (seq - low) % per_copy] + copy * r.length;
    }
    copied += high - low;
  }
  return kept_by_seq_[rep][seq - copied];
}

void TaskGraph::materialize() {
  if (runs_.empty()) return;
  if (collapse_open_ || sealed_) throw std::logic_error("materialize() while collapsing or sealed");
  std::vector<Task> tasks = all_tasks();
  std::vector<std::pair<TaskId, TaskId>> edges;
  edges.reserve(edges_.size() + copied_edges_);
  std::size_t next = 0;
  for (const RepeatRun& r : runs_) {
    for (; next < r.edge_mark; ++next) edges.push_back(edges_[next]);
    for (std::uint32_t k = 1; k <= r.copies; ++k)
      for (const auto& [p, t] : r.edges) edges.emplace_back(p + k * r.length, t + k * r.length);
  }
  for (; next < edges_.size(); ++next) edges.push_back(edges_[next]);
  tasks_ = std::move(tasks);
  edges_ = std::move(edges);
  runs_.clear();
  copied_edges_ = 0;
  index_fresh_ = false;
}

}  // namespace cpsim
