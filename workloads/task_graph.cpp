#include "workloads/task_graph.hpp"

#include <algorithm>
#include <cstring>

#include "workloads/nccl_collectives.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <fmt/format.h>
#include <stdexcept>

namespace cpsim {

std::string LayerInfo::algorithm_name() const {
  std::string out;
  for (CpAlgorithm a : algorithms) out += (out.empty() ? "" : "+") + std::string(cpsim::algorithm_name(a));
  return backward ? out + "-backward" : out;
}

TaskGraph::TaskGraph(int gpu_count, const CollectiveMachine* machine)
    : gpu_count_(gpu_count), machine_(machine), last_compute_(gpu_count, -1) {}

std::string LayerInfo::display_name() const {
  const int layer = place.model_layer >= 0 ? place.model_layer : index;
  std::string name = fmt::format("layer {}{}", layer, backward ? " backward" : "");
  if (place.micro_batch >= 0) name = fmt::format("micro-batch {} \u00b7 {}", place.micro_batch, name);
  if (place.decode_step >= 0) name = fmt::format("decode step {} \u00b7 {}", place.decode_step, name);
  if (place.stage >= 0) name = fmt::format("stage {} \u00b7 {}", place.stage, name);
  return name;
}

int TaskGraph::add_layer(const LayerKinds& kinds, const std::vector<CpAlgorithm>& algorithms, bool backward,
                         LayerPlace place) {
  layers_.push_back({static_cast<int>(layers_.size()), kinds, algorithms, backward, place});
  return layers_.back().index;
}

std::uint16_t TaskGraph::intern(const std::string& name) {
  auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  names_.push_back(name);
  return name_ids_[name] = static_cast<std::uint16_t>(names_.size() - 1);
}

std::vector<std::pair<int, int>> TaskGraph::gpu_pairs() const {
  std::vector<std::pair<int, int>> pairs;
  for (const Task& t : tasks_)
    if (t.kind == TaskKind::FLOW) pairs.emplace_back(t.gpu, t.peer);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

void TaskGraph::check_open() const {
  if (sealed_) throw std::logic_error("the task graph was changed after seal()");
}

void TaskGraph::check_limit() const {
  check_open();
  if (task_count_ >= task_limit_)
    throw WorkloadTooLarge(fmt::format("the workload passed {} tasks (run.max_tasks)", task_limit_));
}

TaskId TaskGraph::add_compute(int gpu, const std::string& name, int layer, int step, double duration_s,
                              double flops, double hbm_bytes) {
  check_limit();
  Task t;
  t.kind = TaskKind::COMPUTE;
  t.name = intern(name);
  gpu += gpu_offset_;
  t.gpu = gpu;
  t.layer = layer;
  t.step = step;
  t.duration_s = duration_s;
  t.flops = flops;
  t.bytes = hbm_bytes;
  const TaskId id = admit(t, gpu);
  if (last_compute_[gpu] >= 0) depend(id, static_cast<TaskId>(last_compute_[gpu]));
  last_compute_[gpu] = id;
  return id;
}

TaskId TaskGraph::add_flow(int src, int dst, double bytes, Traffic traffic, const std::string& name, int layer,
                           int step) {
  if (src == dst) throw std::logic_error("flow from a GPU to itself: " + name);
  src += gpu_offset_, dst += gpu_offset_;
  check_limit();
  Task t;
  t.kind = TaskKind::FLOW;
  t.traffic = traffic;
  t.name = intern(name);
  t.gpu = src;
  t.peer = dst;
  t.layer = layer;
  t.step = step;
  t.bytes = bytes;
  if (machine_) t.duration_s = machine_->p2p_overhead_s(src, dst);
  const TaskId id = admit(t, src);
  if (!(id & kShadow)) ++flow_count_;
  return id;
}

namespace {
// splitmix64's finaliser: a well-mixed 64-bit hash of one word.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
// A cheap order-dependent combination of words (one multiply each); hash_into mixes the result fully.
std::uint64_t mix_all(std::initializer_list<std::uint64_t> words) {
  std::uint64_t h = 0;
  for (std::uint64_t w : words) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
  }
  return h;
}
enum : std::uint64_t { kTaskEvent = 1, kEdgeEvent = 2, kOverheadEvent = 3 };
}  // namespace

void TaskGraph::collapse_by(const RankSymmetry& symmetry) {
  if (!tasks_.empty()) throw std::logic_error("collapse_by after the first task");
  symmetry_ = symmetry;
  collapse_open_ = true;
  owned_.assign(gpu_count_, 0);
  gpu_hash_.assign(gpu_count_, 0);
  kept_by_seq_.assign(gpu_count_, {});
}

void TaskGraph::hash_into(int gpu, std::uint64_t seq, std::uint64_t what) {
  gpu_hash_[gpu] += mix64(what ^ (seq * 0xd6e8feb86659fd93ull));  // a sum: the order of events does not matter
}

std::uint64_t TaskGraph::describe_in_frame_of(int gpu, TaskId id) const {
  const int seen_as = symmetry_->rotate(owner_of(id), -symmetry_->shift(gpu));
  return (std::uint64_t(std::uint32_t(seen_as)) << 32) | seq_of(id);
}

TaskId TaskGraph::admit(Task& t, int owner) {
  if (symmetry_) {
    if (!collapse_open_) throw std::logic_error("a task added to a collapsed graph after finish_collapse()");
    const std::uint32_t seq = owned_[owner]++;
    const int peer = t.peer < 0 ? -1 : symmetry_->rotate(t.peer, -symmetry_->shift(owner));
    hash_into(owner, seq,
              mix_all({kTaskEvent, std::uint64_t(t.kind), std::uint64_t(t.traffic), t.name, std::uint64_t(t.layer),
                       std::uint64_t(t.step), bits(t.duration_s), bits(t.flops), bits(t.bytes), std::uint64_t(peer)}));
    if (shadowed(owner)) {
      shadows_.push_back({owner, seq});
      return kShadow | static_cast<TaskId>(shadows_.size() - 1);
    }
    kept_seq_.push_back(seq);
    kept_by_seq_[owner].push_back(static_cast<TaskId>(task_count_));
  }
  tasks_.push_back(t);
  index_fresh_ = false;
  return static_cast<TaskId>(task_count_++);
}

void TaskGraph::set_flow_overhead(TaskId flow, double overhead_s) {
  if (collapse_open_) hash_into(owner_of(flow), seq_of(flow), mix_all({kOverheadEvent, bits(overhead_s)}));
  if (flow & kShadow) return;
  if (run_of(flow)) throw std::logic_error("set_flow_overhead on a copied task");
  tasks_[slot(flow)].duration_s = overhead_s;
}

bool TaskGraph::finish_collapse(std::string* why_not) {
  if (!collapse_open_) return true;
  collapse_open_ = false;
  for (int gpu = 0; gpu < gpu_count_; ++gpu) {
    const int rep = symmetry_->representative(gpu);
    if (owned_[gpu] != owned_[rep] || gpu_hash_[gpu] != gpu_hash_[rep]) {
      if (why_not)
        *why_not = fmt::format("GPU {}'s tasks are not GPU {}'s rotated ({} and {} tasks)", gpu, rep, owned_[gpu],
                               owned_[rep]);
      return false;
    }
  }
  for (std::size_t e = resolved_edges_; e < edges_.size(); ++e) edges_[e].first = resolve(edges_[e].first);
  for (auto& last : last_compute_)
    if (last >= 0) last = resolve(static_cast<TaskId>(last));
  std::vector<Shadow>().swap(shadows_);
  std::vector<std::uint32_t>().swap(kept_seq_);
  std::vector<std::vector<TaskId>>().swap(kept_by_seq_);
  return true;
}

TaskId TaskGraph::resolve(TaskId id) const {
  if (!(id & kShadow)) return id;
  const Shadow& s = shadows_[id & ~kShadow];
  return kept_by_seq(symmetry_->representative(s.gpu), s.seq);
}

void TaskGraph::depend(TaskId task, TaskId prerequisite) {
  check_open();
  if (symmetry_) {
    if (!collapse_open_) throw std::logic_error("a dependency added to a collapsed graph after finish_collapse()");
    const int owner = owner_of(task);
    hash_into(owner, seq_of(task), mix_all({kEdgeEvent, describe_in_frame_of(owner, prerequisite)}));
    if (task & kShadow) return;
  }
  if (run_of(task)) throw std::logic_error("a dependency added to a copied task");
  edges_.emplace_back(prerequisite, task);
  ++tasks_[slot(task)].predecessor_count;
  index_fresh_ = false;
}

void TaskGraph::reserve(std::size_t tasks, std::size_t dependencies) {
  tasks_.reserve(tasks);
  edges_.reserve(dependencies);
  if (collapse_open_) kept_seq_.reserve(tasks);  // shadows: only in the layers built (the rest are repeats)
}

void TaskGraph::index_successors() const {
  // Counting sort by prerequisite keeps each task's successors in the order the dependencies were added.
  successor_offsets_.assign(tasks_.size() + 1, 0);
  edges_from_copies_.clear();
  for (const auto& [from, to] : edges_)
    if (!run_of(from)) ++successor_offsets_[slot(from) + 1];
  for (std::size_t i = 0; i < tasks_.size(); ++i) successor_offsets_[i + 1] += successor_offsets_[i];
  successor_ids_.resize(successor_offsets_.back());
  successor_edge_.resize(successor_offsets_.back());
  std::vector<std::uint32_t> next(successor_offsets_.begin(), successor_offsets_.end() - 1);
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const auto [from, to] = edges_[e];
    if (run_of(from)) {
      edges_from_copies_.push_back({from, static_cast<std::uint32_t>(e), to});
      continue;
    }
    const std::uint32_t at = next[slot(from)]++;
    successor_ids_[at] = to;
    successor_edge_[at] = static_cast<std::uint32_t>(e);
  }
  std::sort(edges_from_copies_.begin(), edges_from_copies_.end(), [](const EdgeFromCopy& a, const EdgeFromCopy& b) {
    return a.prerequisite != b.prerequisite ? a.prerequisite < b.prerequisite : a.edge < b.edge;
  });
  index_fresh_ = true;
}

void TaskGraph::seal() {
  if (sealed_) return;
  if (!index_fresh_) index_successors();
  std::vector<std::pair<TaskId, TaskId>>().swap(edges_);
  sealed_ = true;
}

std::vector<TaskId> TaskGraph::successors(TaskId id) const {
  std::vector<TaskId> out;
  for_each_successor(id, [&out](TaskId s) { out.push_back(s); });
  return out;
}

std::vector<Task> TaskGraph::all_tasks() const {
  std::vector<Task> out;
  out.reserve(task_count_);
  for_each_task([&out](TaskId, const Task& t) { out.push_back(t); });
  return out;
}

void TaskGraph::replicate(int copies, int gpu_stride) {
  if (copies <= 1) return;
  if (symmetry_) throw std::logic_error("replicate() on a collapsed graph");
  check_open();
  materialize();
  const std::size_t n = tasks_.size(), e = edges_.size();
  std::vector<int> used;  // the GPUs of copy 0 with a compute stream tail
  for (int gpu = 0; gpu < gpu_count_; ++gpu)
    if (last_compute_[gpu] >= 0) used.push_back(gpu);
  tasks_.reserve(n * copies);
  edges_.reserve(e * copies);
  for (int k = 1; k < copies; ++k) {
    const int gpu_offset = k * gpu_stride;
    const TaskId id_offset = static_cast<TaskId>(k * n);
    for (std::size_t i = 0; i < n; ++i) {
      Task t = tasks_[i];
      t.gpu += gpu_offset;
      if (t.peer >= 0) t.peer += gpu_offset;
      if (t.kind == TaskKind::FLOW) ++flow_count_;
      tasks_.push_back(t);
    }
    for (std::size_t i = 0; i < e; ++i) edges_.emplace_back(edges_[i].first + id_offset, edges_[i].second + id_offset);
    for (int gpu : used) last_compute_[gpu + gpu_offset] = last_compute_[gpu] + id_offset;
  }
  task_count_ = tasks_.size();
  index_fresh_ = false;
}

void TaskGraph::depend_all(TaskId task, const std::vector<TaskId>& prerequisites) {
  for (TaskId p : prerequisites) depend(task, p);
}

std::string describe_task(const TaskGraph& g, TaskId id) {
  const Task& t = g.task(id);
  if (t.kind == TaskKind::FLOW)
    return fmt::format("#{} {} gpu{}->gpu{} layer {} step {}", id, g.name(t.name), t.gpu, t.peer, t.layer, t.step);
  return fmt::format("#{} {} gpu{} layer {} step {}", id, g.name(t.name), t.gpu, t.layer, t.step);
}

namespace {
struct CycleFinder : boost::default_dfs_visitor {
  std::vector<std::size_t>* cycle;
  template <class Edge, class Graph>
  void back_edge(Edge e, const Graph& g) {
    if (cycle->empty()) {
      cycle->push_back(boost::source(e, g));
      cycle->push_back(boost::target(e, g));
    }
  }
};
}  // namespace

void TaskGraph::check_acyclic() const {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(task_count_);
  for (std::size_t i = 0; i < task_count_; ++i)
    for (TaskId s : successors(static_cast<TaskId>(i))) boost::add_edge(i, s, g);
  std::vector<std::size_t> cycle;
  CycleFinder finder;
  finder.cycle = &cycle;
  boost::depth_first_search(g, boost::visitor(finder));
  if (!cycle.empty())
    throw std::logic_error(fmt::format("task graph has a cycle through {} -> {}",
                                       describe_task(*this, static_cast<TaskId>(cycle[0])),
                                       describe_task(*this, static_cast<TaskId>(cycle[1]))));
}

}  // namespace cpsim
