// The task graph a workload generator emits and the executor runs: compute tasks (a kernel on one GPU's compute
// stream) and flows (one point-to-point transfer, the unit every collective is lowered to), linked by dependencies.
//
// Stream semantics: compute tasks of one GPU run in the order they were added (a CUDA stream is FIFO), so the graph
// adds that dependency itself. Flows have no implicit order: generators state exactly what each waits for.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workloads/attention/kind.hpp"
#include "workloads/rank_symmetry.hpp"
#include "workloads/traffic.hpp"

namespace cpsim {

using TaskId = std::uint32_t;

enum class TaskKind : std::uint8_t { COMPUTE, FLOW };

// Which layer a task belongs to, and what that layer is (reported per layer kind and CP algorithm).
// Where a graph layer sits in the run, for people reading the trace: the model layer it computes, the decode step
// (output token) it belongs to, its micro-batch when there are several; -1 = not applicable.
struct LayerPlace {
  int model_layer = -1;
  int decode_step = -1;
  int micro_batch = -1;
  int stage = -1;  // pipeline stage when parallel.pp > 1
};

struct LayerInfo {
  int index = 0;
  LayerKinds kinds;                     // the layer's attention kind(s)
  std::vector<CpAlgorithm> algorithms;  // one per kind
  bool backward = false;                // a training backward layer
  LayerPlace place;
  std::string kind_name() const { return layer_kinds_name(kinds); }  // "swa+csa"
  std::string algorithm_name() const;                                // "boundary+allgather", "ring-backward"
  std::string display_name() const;  // "layer 5", "layer 5 backward", "decode step 2 · layer 5", "micro-batch 1 · layer 5"
};

struct Task {
  TaskKind kind = TaskKind::COMPUTE;
  Traffic traffic = Traffic::NONE;
  std::uint16_t name = 0;     // interned: TaskGraph::name(task.name)
  int gpu = 0;                // compute: where it runs; flow: the sender
  int peer = -1;              // flow: the receiver
  int layer = -1;             // index into TaskGraph::layers(), -1 = outside any layer
  int step = -1;              // algorithm step (ring step, collective step), -1 = none
  std::uint32_t predecessor_count = 0;  // here, not last: 48 bytes, not 56, a task
  double duration_s = 0;      // compute: roofline time; flow: fixed cost paid before its bytes move (calibrated
                              // protocol and call latency beyond the route's wire latency)
  double flops = 0;           // compute: arithmetic work
  double bytes = 0;           // flow: payload; compute: HBM traffic
};
static_assert(sizeof(Task) == 48, "a task's size sets the memory of large runs");

class CollectiveMachine;  // workloads/nccl_collectives.hpp

// A workload past its task limit (run.max_tasks): refused before it exhausts memory, with the count in the message.
// Peak resident memory per task of a run whose every layer is stored (graph, engine activities, per-task results),
// rounded up: scenarios/contention-modes.yaml at 50 and 100 micro-batches (2.19 M and 4.37 M tasks) took 0.71 and
// 1.39 GB before the graph was sealed, 0.59 GB at 50 with --no-fast-path after. Copied layers are not stored: with
// repetition the same runs take 0.20 and 0.37 GB.
constexpr double kPeakBytesPerTask = 320;

// `key` names the scenario key the report points at (the limit to raise, or what to make smaller).
struct WorkloadTooLarge : std::runtime_error {
  explicit WorkloadTooLarge(const std::string& message, std::string key = "run.max_tasks")
      : std::runtime_error(message), key(std::move(key)) {}
  std::string key;
};

class TaskGraph {
 public:
  // `machine`: the calibrated network the collectives are lowered for (nullptr or ideal: the seeds' machine);
  // it must outlive the building of the graph, not its execution (costs are copied into the tasks).
  explicit TaskGraph(int gpu_count, const CollectiveMachine* machine = nullptr);
  const CollectiveMachine* machine() const { return machine_; }
  // At most `limit` tasks (about 220 bytes each while built): adding one more throws WorkloadTooLarge.
  void set_task_limit(std::size_t limit) { task_limit_ = limit; }
  std::size_t task_limit() const { return task_limit_; }
  void forget_machine() { machine_ = nullptr; }

  int add_layer(const LayerKinds& kinds, const std::vector<CpAlgorithm>& algorithms, bool backward = false,
                LayerPlace place = {});
  TaskId add_compute(int gpu, const std::string& name, int layer, int step, double duration_s, double flops,
                     double hbm_bytes);
  // A point-to-point message; on a calibrated machine it pays the per-message overhead (p2p latency).
  TaskId add_flow(int src_gpu, int dst_gpu, double bytes, Traffic traffic, const std::string& name, int layer,
                  int step);
  // Sets a flow's fixed cost (collective lowerings).
  void set_flow_overhead(TaskId flow, double overhead_s);
  // `task` starts only after `prerequisite` has finished.
  void depend(TaskId task, TaskId prerequisite);
  void depend_all(TaskId task, const std::vector<TaskId>& prerequisites);

  // GPUs given to add_compute and add_flow are shifted by `offset` (a pipeline stage's tasks are built on its
  // replica-local GPU numbers 0 .. cp*tp-1 and land on the stage's GPUs).
  void set_gpu_offset(int offset) { gpu_offset_ = offset; }
  int gpu_offset() const { return gpu_offset_; }

  // Appends copies 1..copies-1 of the whole graph, copy k on GPUs shifted by k * gpu_stride and task ids by k * the
  // current size (data-parallel replicas side by side; copies must not overlap copy 0's GPUs).
  void replicate(int copies, int gpu_stride);

  // The tasks that wait for `id`, in the order the dependencies were added (the executor starts them in that order).
  // Dependencies are kept as one edge list (no allocation per task: graphs reach millions of tasks), indexed by
  // prerequisite on first use after a change; copied stretches (repeat()) are not stored but derived.
  template <class Visit>
  void for_each_successor(TaskId id, Visit&& visit) const;
  std::vector<TaskId> successors(TaskId id) const;  // the same, gathered

  // Capacity hint for generators that know their size (e.g. layers x the first layer's count): avoids the peak of
  // a vector doubling (old + new buffers) at millions of tasks.
  void reserve(std::size_t tasks, std::size_t dependencies);
  std::size_t dependency_count() const {
    return (sealed_ ? successor_ids_.size() + edges_from_copies_.size() : edges_.size()) + copied_edges_;
  }
  // The graph is complete: index the successors and drop the edge list (a third of a large graph's memory), which
  // only building needs. Adding a task or a dependency afterwards is a logic_error.
  void seal();
  bool sealed() const { return sealed_; }

  std::size_t task_count() const { return task_count_; }
  // A task by id; a task of a copied stretch is its source task with its layer moved (built on demand).
  Task task(TaskId id) const {
    if (runs_.empty() || id < runs_.front().first) return tasks_[id];
    return task_beyond_first_run(id);
  }
  std::vector<Task> all_tasks() const;  // every task, in id order (tests, small graphs)
  // Every task in id order, as visit(id, task): what a pass over the whole graph should use (no lookup per task).
  template <class Visit>
  void for_each_task(Visit&& visit) const;
  // The tasks stored: every distinct task content (each copy of a stretch repeats a stored one but for its layer).
  const std::vector<Task>& stored_tasks() const { return tasks_; }
  const std::vector<LayerInfo>& layers() const { return layers_; }
  const std::string& name(std::uint16_t id) const { return names_[id]; }
  int gpu_count() const { return gpu_count_; }
  std::size_t flow_count() const { return flow_count_; }
  // Every (sender, receiver) GPU pair some flow uses, sorted: the routes the platform must have.
  std::vector<std::pair<int, int>> gpu_pairs() const;
  // The last compute task added on a GPU (its stream tail), or -1.
  std::int64_t last_compute(int gpu) const { return last_compute_[gpu]; }

  // Throws std::logic_error naming the tasks of a cycle, if any (a generator bug, never user input).
  void check_acyclic() const;

  // Collapsed building (workloads/rank_symmetry.hpp), set before the first task: only the representatives' tasks
  // are kept. A task of another GPU is a shadow: its id stands for "the k-th task of GPU x" and is folded onto
  // the k-th task of x's representative; its content and dependencies, seen from its own GPU, are hashed so that
  // finish_collapse() can check every GPU matches its representative. Reports multiply by orbit_size().
  void collapse_by(const RankSymmetry& symmetry);
  // Checks the invariance and resolves the shadows; false (and `why_not`) when some GPU differs: build again whole.
  bool finish_collapse(std::string* why_not);
  const RankSymmetry* symmetry() const { return symmetry_ ? &*symmetry_ : nullptr; }
  // GPUs each kept task stands for: the orbit size when collapsed, else 1.
  int copies_per_task() const { return symmetry_ ? symmetry_->orbit_size() : 1; }
  // Repetition (workloads/task_graph_repeat.cpp). A generator marks where each stretch of the graph begins (e.g. one
  // model layer of every micro-batch). When the stretch just built is the one before it moved by its length (same
  // tasks, layers renumbered, same dependencies with every prerequisite moved as well, inside or before the
  // stretch), a generator that is a function of its inputs alone would build every further stretch of the same
  // inputs the same way: repeat() copies it instead of building it.
  struct Mark {
    std::size_t tasks = 0, edges = 0, shadows = 0, layers = 0;
    std::vector<std::uint32_t> owned;  // collapsed building: per GPU, the tasks it owns so far
    std::vector<std::uint64_t> hash;   // collapsed building: per GPU, its hash so far
    std::vector<std::int64_t> last_compute;  // per GPU, its stream's tail
  };
  Mark mark() const;
  // Whether the stretch [b, now) is the stretch [a, b) moved by b - a (collapsed: also every GPU's tasks so far
  // equal to its representative's, so that the copy's shadows need no hashing).
  bool repeats(const Mark& a, const Mark& b, int model_layer_step) const;
  // Whether `later` is `earlier` moved from stretch [a, b) to the next one (for what a generator holds on to).
  bool is_moved(TaskId earlier, TaskId later, const Mark& a, const Mark& b) const;
  // Appends a copy of the last stretch [from, now) moved by its length, model layers by `model_layer_step`. The copy
  // is not stored: its tasks and dependencies are the stretch's, moved, whenever asked for (task(),
  // for_each_successor()), so a model's 80 layers cost the memory of the few built.
  void repeat(const Mark& from, int model_layer_step);
  // The copy, in the stretch after [from, to), of task `id` of [from, to) (a stretch repeat() appended).
  TaskId moved(TaskId id, const Mark& from, const Mark& to);
  std::size_t repeated_tasks() const { return repeated_tasks_; }

  // Why a graph is not collapsed, for engine.json ("" when nothing was tried).
  void set_uncollapsed_reason(std::string why) { uncollapsed_reason_ = std::move(why); }
  const std::string& uncollapsed_reason() const { return uncollapsed_reason_; }

 private:
  static constexpr TaskId kShadow = TaskId(1) << 31;  // shadow ids: kShadow | index into shadows_
  struct Shadow {
    std::int32_t gpu;
    std::uint32_t seq;  // its place among the tasks its GPU owns (computes, or sends)
  };
  bool shadowed(int gpu) const { return symmetry_ && !symmetry_->is_representative(gpu); }
  // A new task owned by `gpu`: a kept id, or a shadow id with its content hashed.
  TaskId admit(Task& t, int owner_gpu);
  std::uint64_t describe_in_frame_of(int gpu, TaskId id) const;  // where a task sits, seen from `gpu`
  void hash_into(int gpu, std::uint64_t seq, std::uint64_t what);
  int owner_of(TaskId id) const { return id & kShadow ? shadows_[id & ~kShadow].gpu : task(id).gpu; }
  std::uint32_t seq_of(TaskId id) const { return id & kShadow ? shadows_[id & ~kShadow].seq : kept_seq_of(id); }
  std::optional<RankSymmetry> symmetry_;
  bool collapse_open_ = false;  // collapse_by() called, finish_collapse() not yet
  std::string uncollapsed_reason_;
  std::vector<Shadow> shadows_;
  std::vector<std::uint32_t> kept_seq_;           // per kept task: its seq on its GPU
  std::vector<std::vector<TaskId>> kept_by_seq_;  // per representative GPU: its kept tasks by seq
  std::vector<std::uint32_t> owned_;              // per GPU: tasks it owns so far
  std::vector<std::uint64_t> gpu_hash_;           // per GPU: the sum of its tasks' and dependencies' hashes
  std::size_t resolved_edges_ = 0;                // edges_[0, this) hold no shadow id (repeat() resolved them)

  // Copies of one built stretch, appended by repeat(): copy k (1..copies) of the stretch [first - length, first) is
  // that stretch moved by k * length ids and k * layer_step graph layers. Tasks added later are stored after it.
  struct RepeatRun {
    TaskId first = 0;            // copy 1's first task
    std::size_t source_slot = 0;  // the stretch's first task in tasks_
    std::uint32_t length = 0, copies = 0;
    int layer_step = 0;
    std::size_t slot_end = 0;   // tasks_ slot of the first task stored after the run
    std::size_t edge_mark = 0;  // edges_ stored before the copies' dependencies would have been added
    std::vector<std::pair<TaskId, TaskId>> edges;  // the stretch's dependencies (prerequisite, task), in order
    TaskId lowest_prerequisite = 0;
    std::vector<std::uint32_t> by_prerequisite;  // CSR of `edges` by prerequisite - lowest_prerequisite
    std::vector<std::uint32_t> edge_of;          // edge indices, grouped by prerequisite, in order
    // Collapsed building: per GPU, the tasks it owns in one copy, and the seq of its first in copy 1.
    std::vector<std::uint32_t> owned_per_copy, first_seq;
    std::vector<std::size_t> kept_source_index;  // per representative: index in kept_by_seq_ of its first source task
    TaskId end() const { return first + length * copies; }
  };
  std::vector<RepeatRun> runs_;
  std::size_t task_count_ = 0;    // stored and copied
  std::size_t copied_edges_ = 0;  // dependencies of copies (derived, not stored)
  std::size_t slot(TaskId id) const;                // a stored task's place in tasks_
  const RepeatRun* run_of(TaskId id) const;         // the run holding a copied task, or nullptr (stored)
  struct Placement {
    std::size_t slot;       // the stored task it is (or copies)
    std::uint32_t copy;     // 0: stored; k: copy k of its run
    const RepeatRun* run;   // nullptr when stored
  };
  Placement placement(TaskId id) const;
  Task task_beyond_first_run(TaskId id) const;
  template <class Visit>
  void visit_copied_successors(const RepeatRun& r, TaskId id, Visit& visit) const;
  void materialize();  // stores every copy (replicate() needs stored tasks)
  std::uint32_t kept_seq_of(TaskId id) const;        // collapsed building: a kept task's seq on its GPU
  TaskId kept_by_seq(int rep, std::uint32_t seq) const;
  std::size_t repeated_tasks_ = 0;                // tasks repeat() copied rather than built
  TaskId resolve(TaskId id) const;                // a shadow's kept task (its representative's of the same seq)

  std::uint16_t intern(const std::string& name);

  int gpu_count_;
  int gpu_offset_ = 0;
  const CollectiveMachine* machine_ = nullptr;
  std::size_t task_limit_ = SIZE_MAX;
  void check_limit() const;
  void check_open() const;  // throws once sealed
  bool sealed_ = false;
  std::vector<Task> tasks_;
  std::vector<LayerInfo> layers_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint16_t> name_ids_;
  std::vector<std::int64_t> last_compute_;
  std::size_t flow_count_ = 0;
  std::vector<std::pair<TaskId, TaskId>> edges_;  // stored (prerequisite, task), in insertion order
  // CSR index of edges_ by stored prerequisite's slot, rebuilt when stale, with each edge's place in edges_ (which
  // says where the copies' derived dependencies fall among them); edges whose prerequisite is a copy, apart.
  mutable std::vector<std::uint32_t> successor_offsets_;
  mutable std::vector<TaskId> successor_ids_;
  mutable std::vector<std::uint32_t> successor_edge_;
  struct EdgeFromCopy {
    TaskId prerequisite;
    std::uint32_t edge;
    TaskId task;
  };
  mutable std::vector<EdgeFromCopy> edges_from_copies_;  // sorted by (prerequisite, edge)
  mutable bool index_fresh_ = false;
  void index_successors() const;
};

std::string describe_task(const TaskGraph& g, TaskId id);

// The copies' dependencies on `id`: copy k holds the stretch's dependency (p, t) as (p + k L, t + k L), so `id` is a
// prerequisite in copy k wherever p = id - k L; copies come in the order they were appended.
template <class Visit>
void TaskGraph::visit_copied_successors(const RepeatRun& r, TaskId id, Visit& visit) const {
  const std::int64_t low = r.lowest_prerequisite, high = std::int64_t(r.first) - 1;  // prerequisites lie in [low, high]
  const std::int64_t x = id, length = r.length;
  std::int64_t k = x - high <= 0 ? 1 : (x - high + length - 1) / length;
  for (k = std::max<std::int64_t>(k, 1); k <= r.copies && x - k * length >= low; ++k) {
    const std::size_t p = static_cast<std::size_t>(x - k * length - low);
    for (std::uint32_t i = r.by_prerequisite[p]; i < r.by_prerequisite[p + 1]; ++i)
      visit(static_cast<TaskId>(r.edges[r.edge_of[i]].second + k * length));
  }
}

template <class Visit>
void TaskGraph::for_each_task(Visit&& visit) const {
  TaskId id = 0;
  std::size_t stored = 0;
  for (const RepeatRun& r : runs_) {
    for (; id < r.first; ++id) visit(id, tasks_[stored++]);
    for (std::uint32_t k = 1; k <= r.copies; ++k)
      for (std::uint32_t j = 0; j < r.length; ++j) {
        Task t = tasks_[r.source_slot + j];
        if (t.layer >= 0) t.layer += static_cast<int>(k) * r.layer_step;
        visit(id++, static_cast<const Task&>(t));
      }
  }
  for (; stored < tasks_.size(); ++stored) visit(id++, tasks_[stored]);
}

template <class Visit>
void TaskGraph::for_each_successor(TaskId id, Visit&& visit) const {
  if (!index_fresh_) index_successors();
  std::size_t next_run = 0;
  // Stored dependencies and the copies' come in the order they were added: a run's copies after the stored
  // dependencies added before it.
  const auto visit_stored = [&](std::uint32_t edge, TaskId successor) {
    for (; next_run < runs_.size() && runs_[next_run].edge_mark <= edge; ++next_run)
      visit_copied_successors(runs_[next_run], id, visit);
    visit(successor);
  };
  if (run_of(id) == nullptr) {
    const std::size_t s = slot(id);
    for (std::uint32_t i = successor_offsets_[s]; i < successor_offsets_[s + 1]; ++i)
      visit_stored(successor_edge_[i], successor_ids_[i]);
  } else {  // a copy's successors among tasks stored after its run
    auto it = std::lower_bound(edges_from_copies_.begin(), edges_from_copies_.end(), id,
                               [](const EdgeFromCopy& e, TaskId v) { return e.prerequisite < v; });
    for (; it != edges_from_copies_.end() && it->prerequisite == id; ++it) visit_stored(it->edge, it->task);
  }
  for (; next_run < runs_.size(); ++next_run) visit_copied_successors(runs_[next_run], id, visit);
}

}  // namespace cpsim
