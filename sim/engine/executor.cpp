#include "sim/engine/executor.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <list>
#include <map>
#include <unordered_map>
#include <tuple>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <xbt/log.h>

#include "platforms/simgrid_platform.hpp"
#include "sim/engine/contention_policy.hpp"

namespace sg4 = simgrid::s4u;

namespace cpsim {
namespace {

// The hosts flows run between: one platform, or (a policy isolating traffic classes, on a generated platform) one
// disjoint copy of the network per traffic class the graph uses, so each class runs exactly as if alone.
class Network {
 public:
  Network(std::vector<std::vector<sg4::Host*>> copies, std::array<int, kTrafficClasses> copy_of_class)
      : copies_(std::move(copies)), copy_of_class_(copy_of_class) {}
  sg4::Host* host(Traffic cls, int gpu) const { return copies_[copy_of(cls)][gpu]; }
  int copy_of(Traffic cls) const { return copy_of_class_[int(cls)]; }
  int gpus() const { return static_cast<int>(copies_.front().size()); }
  bool isolated() const { return copies_.size() > 1; }

 private:
  std::vector<std::vector<sg4::Host*>> copies_;
  std::array<int, kTrafficClasses> copy_of_class_;
};

Network build_network(sg4::Engine& engine, const PlatformSpec& platform, const TaskGraph& g,
                      const ContentionPolicy& policy) {
  std::array<bool, kTrafficClasses> used{};
  for (const Task& t : g.stored_tasks())  // copies repeat these
    if (t.kind == TaskKind::FLOW) used[int(t.traffic)] = true;
  std::array<int, kTrafficClasses> copy_of_class{};
  std::vector<std::string> prefixes;
  for (int c = 0; c < kTrafficClasses; ++c)
    if (used[c]) {
      copy_of_class[c] = static_cast<int>(prefixes.size());
      prefixes.push_back(traffic_name(Traffic(c)) + std::string("/"));
    }
  // An XML platform cannot be copied: there the policy's link capacities approximate the isolation.
  if (!policy.isolates_classes() || !platform.xml_file.empty() || prefixes.size() < 2)
    return Network({build_simgrid_platform(engine, platform, g.gpu_pairs(), g.symmetry())}, {});
  return Network(build_network_copies(engine, platform, prefixes, g.gpu_pairs(), g.symmetry()), copy_of_class);
}

class DagRunner {
 public:
  DagRunner(const TaskGraph& graph, const Network& net, std::vector<sg4::Link*> links, const ContentionPolicy& policy,
            ExecutionResult& out, const ProgressFn& progress, bool closed_form)
      : g_(graph), net_(net), links_(std::move(links)), policy_(policy), progress_(progress),
        shape_links_(policy.shapes_links() && !net.isolated()),
        closed_form_(closed_form && !shape_links_), link_load_(links_.size(), 0), alone_on_link_(links_.size(), -1),
        out_(out),
        waiting_(graph.task_count()), link_classes_(links_.size()),
        gpu_classes_(net.gpus()), gpu_queued_(net.gpus()), running_(net.gpus()) {
    g_.for_each_task([this](TaskId i, const Task& t) { waiting_[i] = t.predecessor_count; });
  }

  void run(sg4::Engine& engine) {
    // Signals are process-wide and persist: cpsim runs one simulation per process, so connecting here is safe.
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_done(a); });
    sg4::Engine::on_time_advance_cb([this](double) { finished_.clear(); });
    for (std::size_t i = 0; i < waiting_.size(); ++i)
      if (waiting_[i] == 0) start(static_cast<TaskId>(i));
    engine.run();
    finished_.clear();
    if (completed_ != g_.task_count()) report_stuck();
  }
  std::size_t converted() const { return converted_; }

 private:
  void start(TaskId id) {
    const Task& t = g_.task(id);
    if (t.kind == TaskKind::COMPUTE) {
      // The roofline already decided the duration and a GPU's kernels run one at a time (FIFO stream), so a
      // compute task is a timer: no resource to share, and no entry in SimGrid 3.32's O(in-flight) activity list.
      const double now = sg4::Engine::get_clock();
      running_[t.gpu] = {id, now, now, t.duration_s, policy_.compute_stretch(kernels_on(t.gpu)), nullptr};
      schedule_kernel_end(t.gpu);
    } else if (!policy_.admits(t.traffic, on_pair(gpu_classes_, t), on_pair(gpu_queued_, t))) {
      enqueue(id, t);  // e.g. exclusive: another class is busy on, or already waiting for, one of its GPUs
    } else {
      launch_flow(id, t);
    }
  }

  // The GPU's running kernel ends when its remaining roofline time, stretched by the SMs comm kernels hold
  // (subtractive; 1 otherwise), has passed.
  void schedule_kernel_end(int gpu) {
    RunningKernel& k = running_[gpu];
    k.timer = simgrid::kernel::timer::Timer::set(k.updated_s + k.remaining_s * k.stretch, [this, gpu] {
      const RunningKernel done = running_[gpu];
      running_[gpu].timer = nullptr;  // the engine deletes a timer once it has fired
      complete(done.id, done.start_s, sg4::Engine::get_clock());
    });
  }

  // Comm kernels touching `gpu` started or ended: its running kernel goes on at the new rate (subtractive).
  void restretch(int gpu) {
    RunningKernel& k = running_[gpu];
    if (!k.timer) return;
    const double stretch = policy_.compute_stretch(kernels_on(gpu));
    if (stretch == k.stretch) return;
    const double now = sg4::Engine::get_clock();
    k.remaining_s = std::max(0.0, k.remaining_s - (now - k.updated_s) / k.stretch);
    k.updated_s = now;
    k.stretch = stretch;
    k.timer->remove();
    schedule_kernel_end(gpu);
  }

  // An admitted flow holds its place (counts, exclusive admission) from now on; its bytes move after its fixed
  // cost (calibrated protocol and call latency) and its route's wire latency, which a timer spends without touching
  // the network (the links themselves carry no latency: see execute()).
  // (A task of a copied stretch is built on demand, so the helpers take it along rather than look it up again.)
  void launch_flow(TaskId id, const Task& t) {
    account_flow(id, t, +1);
    out_.start_s[id] = sg4::Engine::get_clock();
    const double wait_s = t.duration_s + out_.routes[out_.route_of_task[id]].latency_s;
    if (wait_s <= 0) return move_bytes(id, t);
    // Flows of one collective step (or symmetric ring hops) share a deadline: one engine timer moves them all.
    auto [it, fresh] = overheads_.try_emplace(out_.start_s[id] + wait_s);
    it->second.push_back(id);
    if (fresh)
      simgrid::kernel::timer::Timer::set(it->first, [this, deadline = it->first] {
        const auto node = overheads_.extract(deadline);
        for (TaskId f : node.mapped()) move_bytes(f, g_.task(f));
      });
  }

  // The flow's bytes start moving: alone on every link of its route, it ends at now + bytes / bottleneck (what
  // max-min sharing gives a lone flow) on a timer; else it is an engine comm, and any flow alone on one of its links
  // becomes one too, with the bytes it has left, from now on.
  void move_bytes(TaskId id, const Task& t) {
    const double payload = static_cast<double>(std::llround(t.bytes));
    const std::vector<std::uint32_t>& links = out_.routes[out_.route_of_task[id]].links;
    if (closed_form_) {
      bool alone = !links.empty();
      for (std::uint32_t l : links) alone = alone && link_load_[l] == 0;
      if (alone) return start_alone(id, payload);
      for (std::uint32_t l : links)
        if (alone_on_link_[l] >= 0) to_engine(static_cast<TaskId>(alone_on_link_[l]));
      for (std::uint32_t l : links) ++link_load_[l];
    }
    start_comm(id, t, payload);
  }

  void start_comm(TaskId id, const Task& t, double payload) {
    sg4::CommPtr c = sg4::Comm::sendto_init(net_.host(t.traffic, t.gpu), net_.host(t.traffic, t.peer));
    c->set_payload_size(static_cast<std::uint64_t>(payload));
    c->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1));
    live_.emplace(id, c);
    c->start();
  }

  void start_alone(TaskId id, double payload) {
    const std::vector<std::uint32_t>& links = out_.routes[out_.route_of_task[id]].links;
    double rate_Bps = out_.link_bw_Bps[links.front()];
    for (std::uint32_t l : links) {
      rate_Bps = std::min(rate_Bps, out_.link_bw_Bps[l]);
      ++link_load_[l];
      alone_on_link_[l] = id;
    }
    const double now = sg4::Engine::get_clock();
    AloneFlow& a = alone_[id];
    a = {now, payload, rate_Bps, nullptr};
    a.timer = simgrid::kernel::timer::Timer::set(now + payload / rate_Bps, [this, id] { end_alone(id); });
  }

  void release_alone_links(TaskId id) {
    for (std::uint32_t l : out_.routes[out_.route_of_task[id]].links) alone_on_link_[l] = -1;
  }

  void end_alone(TaskId id) {
    release_alone_links(id);
    for (std::uint32_t l : out_.routes[out_.route_of_task[id]].links) --link_load_[l];
    alone_.erase(id);
    flow_done(id, sg4::Engine::get_clock());
  }

  // Another flow needs a link of flow `id`: it goes on as an engine comm of the bytes it has left (rounded to a byte:
  // the engine's payloads are whole bytes, so this costs at most 1 / bottleneck of time), sharing from now on.
  void to_engine(TaskId id) {
    const AloneFlow a = alone_.at(id);
    alone_.erase(id);
    a.timer->remove();
    release_alone_links(id);
    const double left = a.payload - a.rate_Bps * (sg4::Engine::get_clock() - a.bytes_start_s);
    ++converted_;
    start_comm(id, g_.task(id), std::max(0.0, std::round(left)));
  }

  // Comm kernels running on a GPU: one per traffic class with flows in flight there (sim/engine/contention_policy.cpp).
  int kernels_on(int gpu) const {
    int n = 0;
    for (int c : gpu_classes_[gpu]) n += c > 0;
    return n;
  }

  // The GPU whose state a flow's receiver side touches: the receiver, or in a collapsed graph its representative,
  // which receives the rotated copy of this flow (workloads/rank_symmetry.hpp).
  int receiver(const Task& t) const { return g_.symmetry() ? g_.symmetry()->representative(t.peer) : t.peer; }

  // Per-class counts over a flow's sender and receiver.
  ClassCounts on_pair(const std::vector<ClassCounts>& per_gpu, const Task& t) const {
    ClassCounts c = per_gpu[t.gpu];
    for (int k = 0; k < kTrafficClasses; ++k) c[k] += per_gpu[receiver(t)][k];
    return c;
  }

  void enqueue(TaskId id, const Task& t) {
    out_.held_ready_s.emplace(id, sg4::Engine::get_clock());
    queued_.push_back(id);
    ++gpu_queued_[t.gpu][int(t.traffic)];
    ++gpu_queued_[receiver(t)][int(t.traffic)];
  }

  // A flow starts (+1) or ends (-1): per-GPU and per-link counts, and the links' capacity under the policy.
  void account_flow(TaskId id, const Task& t, int delta) {
    const int cls = int(t.traffic);
    gpu_classes_[t.gpu][cls] += delta;
    gpu_classes_[receiver(t)][cls] += delta;
    if (policy_.stretches_compute()) restretch(t.gpu), restretch(receiver(t));
    if (!shape_links_) return;
    for (std::uint32_t l : out_.routes[out_.route_of_task[id]].links) {
      link_classes_[l][cls] += delta;
      links_[l]->set_bandwidth(policy_.link_capacity_Bps(out_.link_bw_Bps[l], link_classes_[l]));
    }
  }

  // Start, in readiness order, every queued flow the policy now admits, given the flows still queued before it.
  void drain_queue() {
    std::vector<ClassCounts> ahead(gpu_queued_.size());  // flows left queued so far in this pass, per GPU and class
    for (auto it = queued_.begin(); it != queued_.end();) {
      const Task& t = g_.task(*it);
      if (policy_.admits(t.traffic, on_pair(gpu_classes_, t), on_pair(ahead, t))) {
        const TaskId id = *it;
        it = queued_.erase(it);
        --gpu_queued_[t.gpu][int(t.traffic)];
        --gpu_queued_[receiver(t)][int(t.traffic)];
        launch_flow(id, t);
      } else {
        ++ahead[t.gpu][int(t.traffic)];
        ++ahead[receiver(t)][int(t.traffic)];
        ++it;
      }
    }
  }

  void on_done(const sg4::Activity& a) {
    const auto tag = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
    if (tag == 0) return;
    const TaskId id = static_cast<TaskId>(tag - 1);
    const auto node = live_.extract(id);
    finished_.push_back(std::move(node.mapped()));  // released once the clock moves on, never inside its own callback
    if (closed_form_)
      for (std::uint32_t l : out_.routes[out_.route_of_task[id]].links) --link_load_[l];
    flow_done(id, a.get_finish_time());
  }

  void flow_done(TaskId id, double finish_s) {
    account_flow(id, g_.task(id), -1);
    complete(id, out_.start_s[id], finish_s);
    if (!queued_.empty()) drain_queue();
  }

  void complete(TaskId id, double start_s, double finish_s) {
    out_.start_s[id] = start_s;
    out_.finish_s[id] = finish_s;
    ++completed_;
    if (progress_ && completed_ % 4096 == 0) report_progress();
    g_.for_each_successor(id, [this](TaskId s) {
      if (--waiting_[s] == 0) start(s);
    });
  }

  void report_progress() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_report_ < std::chrono::milliseconds(500)) return;
    last_report_ = now;
    progress_(completed_, g_.task_count(), sg4::Engine::get_clock());
  }

  // A generator bug: name the cycle if there is one (check_acyclic throws), else the first tasks left waiting.
  void report_stuck() const {
    g_.check_acyclic();
    std::string stuck;
    int shown = 0;
    for (std::size_t i = 0; i < waiting_.size() && shown < 5; ++i)
      if (waiting_[i] > 0 || live_.count(static_cast<TaskId>(i))) {
        stuck += (shown++ ? "; " : "") + describe_task(g_, static_cast<TaskId>(i));
      }
    throw std::logic_error(fmt::format("simulation stopped with {} of {} tasks done; stuck: {}", completed_,
                                       g_.task_count(), stuck));
  }

  const TaskGraph& g_;
  const Network& net_;
  std::vector<sg4::Link*> links_;  // indexed like ExecutionResult::link_names
  const ContentionPolicy& policy_;
  const ProgressFn& progress_;
  bool shape_links_;  // re-set link capacities as flows come and go (not on class-isolated networks)
  bool closed_form_;  // flows alone on their route run on timers (fixed link capacities only)
  std::vector<std::uint32_t> link_load_;      // closed form: flows moving bytes on each link (alone or engine)
  std::vector<std::int64_t> alone_on_link_;   // the flow alone on a link, or -1
  struct AloneFlow {
    double bytes_start_s, payload, rate_Bps;
    simgrid::kernel::timer::Timer* timer;
  };
  std::unordered_map<TaskId, AloneFlow> alone_;
  std::size_t converted_ = 0;  // alone flows that had to join the engine
  ExecutionResult& out_;
  std::vector<std::uint32_t> waiting_;
  std::unordered_map<TaskId, sg4::ActivityPtr> live_;  // engine comms in flight
  std::vector<sg4::ActivityPtr> finished_;
  std::size_t completed_ = 0;
  std::chrono::steady_clock::time_point last_report_ = std::chrono::steady_clock::now();
  std::vector<ClassCounts> link_classes_;  // flows in flight per link and traffic class
  std::vector<ClassCounts> gpu_classes_;   // flows in flight touching a GPU, per traffic class
  std::list<TaskId> queued_;               // ready flows the policy has not admitted yet (exclusive)
  std::map<double, std::vector<TaskId>> overheads_;  // admitted flows paying their fixed cost, by when it ends
  std::vector<ClassCounts> gpu_queued_;    // queued flows touching a GPU, per traffic class
  struct RunningKernel {
    TaskId id = 0;
    double start_s = 0, updated_s = 0;  // when it started; when remaining_s and stretch were last set
    double remaining_s = 0;             // roofline time left at updated_s
    double stretch = 1;
    simgrid::kernel::timer::Timer* timer = nullptr;  // its end; null when the GPU computes nothing
  };
  std::vector<RunningKernel> running_;  // per GPU: its stream runs one kernel at a time
};

// Records the route of every (network copy, src, dst) the graph uses, with its latency and directed links.
std::vector<sg4::Link*> record_routes(const TaskGraph& g, const Network& net, ExecutionResult& out) {
  std::vector<sg4::Link*> link_ptrs;
  std::map<std::tuple<int, int, int>, std::int32_t> route_ids;  // (network copy, src, dst)
  std::map<const sg4::Link*, std::uint32_t> link_ids;
  out.route_of_task.assign(g.task_count(), -1);
  g.for_each_task([&](TaskId i, const Task& t) {
    if (t.kind != TaskKind::FLOW) return;
    auto [it, fresh] = route_ids.try_emplace({net.copy_of(t.traffic), t.gpu, t.peer},
                                             static_cast<std::int32_t>(out.routes.size()));
    if (fresh) {
      std::vector<sg4::Link*> links;
      FlowRoute r;
      net.host(t.traffic, t.gpu)->route_to(net.host(t.traffic, t.peer), links, &r.latency_s);
      if (links.empty() && t.gpu != t.peer)  // the platform builder refuses missing routes first
        throw std::logic_error(fmt::format("no route from GPU {} to GPU {}", t.gpu, t.peer));
      for (const sg4::Link* l : links) {
        auto [lit, new_link] = link_ids.try_emplace(l, static_cast<std::uint32_t>(out.link_names.size()));
        if (new_link) {
          link_ptrs.push_back(const_cast<sg4::Link*>(l));
          out.link_names.push_back(l->get_name());
          out.link_bw_Bps.push_back(l->get_bandwidth());
        }
        r.links.push_back(lit->second);
      }
      out.routes.push_back(std::move(r));
    }
    out.route_of_task[i] = it->second;
  });
  return link_ptrs;
}

}  // namespace

void check_executable(const TaskGraph& graph, const PlatformSpec& platform) {
  const auto engine = start_engine();
  (void)build_simgrid_platform(*engine, platform, graph.gpu_pairs(), graph.symmetry());
}

ExecutionResult execute(const TaskGraph& graph, const PlatformSpec& platform, const ContentionSpec& contention,
                        const ProgressFn& progress, bool closed_form_flows) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto engine = start_engine();
  const auto policy = make_contention_policy(contention, platform.gpu.sm_count);
  const Network net = build_network(*engine, platform, graph, *policy);
  spdlog::info("platform: {} GPUs built in {:.3f} s{}", net.gpus(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(),
               net.isolated() ? ", one network copy per traffic class" : "");

  ExecutionResult out;
  out.start_s.assign(graph.task_count(), 0);
  out.finish_s.assign(graph.task_count(), 0);
  auto links = record_routes(graph, net, out);
  // CM02 shares a link among flows in proportion to 1 / route latency (TCP's RTT unfairness; research notes, 4.4):
  // a PXN flow (7 us) would get 2/9 of the share of an NVLink flow (2 us) on the same port, which NVLink and NIC
  // arbitration do not do. Each flow pays its route's latency on its own timer instead, and the links carry none:
  // every flow on a link then has the same weight, and a lone flow still takes latency + bytes / bandwidth.
  for (sg4::Link* l : engine->get_all_links()) l->set_latency(0);
  const double t0 = sg4::Engine::get_clock();
  DagRunner runner(graph, net, std::move(links), *policy, out, progress, closed_form_flows);
  runner.run(*engine);
  spdlog::debug("closed form: {} flows alone on their route had to join the engine", runner.converted());
  for (auto& t : out.start_s) t -= t0;
  for (auto& [id, t] : out.held_ready_s) t -= t0;
  for (auto& t : out.finish_s) {
    t -= t0;
    out.makespan_s = std::max(out.makespan_s, t);
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace cpsim
