#include "sim/executor.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <xbt/log.h>

#include "platforms/simgrid_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace cpsim {
namespace {

class DagRunner {
 public:
  DagRunner(const TaskGraph& graph, std::vector<sg4::Host*> hosts, ExecutionResult& out)
      : g_(graph), hosts_(std::move(hosts)), out_(out), waiting_(graph.tasks().size()), live_(graph.tasks().size()) {
    for (std::size_t i = 0; i < g_.tasks().size(); ++i) waiting_[i] = g_.tasks()[i].predecessor_count;
  }

  void run(sg4::Engine& engine) {
    // Signals are process-wide and persist: cpsim runs one simulation per process, so connecting here is safe.
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_done(a); });
    sg4::Engine::on_time_advance_cb([this](double) { finished_.clear(); });
    for (std::size_t i = 0; i < waiting_.size(); ++i)
      if (waiting_[i] == 0) start(static_cast<TaskId>(i));
    engine.run();
    finished_.clear();
    if (completed_ != g_.tasks().size()) report_stuck();
  }

 private:
  void start(TaskId id) {
    const Task& t = g_.task(id);
    void* tag = reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1);
    if (t.kind == TaskKind::COMPUTE) {
      // The roofline already decided the duration and a GPU's kernels run one at a time (FIFO stream), so a
      // compute task is a timer: no resource to share, and no entry in SimGrid 3.32's O(in-flight) activity list.
      const double start_s = sg4::Engine::get_clock();
      simgrid::kernel::timer::Timer::set(start_s + t.duration_s, [this, id, start_s] {
        complete(id, start_s, sg4::Engine::get_clock());
      });
    } else {
      sg4::CommPtr c = sg4::Comm::sendto_init(hosts_[t.gpu], hosts_[t.peer]);
      c->set_payload_size(static_cast<std::uint64_t>(std::llround(t.bytes)));
      c->set_data(tag);
      live_[id] = c;
      c->start();
    }
  }

  void on_done(const sg4::Activity& a) {
    const auto tag = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
    if (tag == 0) return;
    const TaskId id = static_cast<TaskId>(tag - 1);
    finished_.push_back(std::move(live_[id]));  // released once the clock moves on, never inside its own callback
    complete(id, a.get_start_time(), a.get_finish_time());
  }

  void complete(TaskId id, double start_s, double finish_s) {
    out_.start_s[id] = start_s;
    out_.finish_s[id] = finish_s;
    ++completed_;
    for (TaskId s : g_.successors(id))
      if (--waiting_[s] == 0) start(s);
  }

  // A generator bug: name the cycle if there is one (check_acyclic throws), else the first tasks left waiting.
  void report_stuck() const {
    g_.check_acyclic();
    std::string stuck;
    int shown = 0;
    for (std::size_t i = 0; i < waiting_.size() && shown < 5; ++i)
      if (waiting_[i] > 0 || live_[i]) {
        stuck += (shown++ ? "; " : "") + describe_task(g_, static_cast<TaskId>(i));
      }
    throw std::logic_error(fmt::format("simulation stopped with {} of {} tasks done; stuck: {}", completed_,
                                       g_.tasks().size(), stuck));
  }

  const TaskGraph& g_;
  std::vector<sg4::Host*> hosts_;
  ExecutionResult& out_;
  std::vector<std::uint32_t> waiting_;
  std::vector<sg4::ActivityPtr> live_;
  std::vector<sg4::ActivityPtr> finished_;
  std::size_t completed_ = 0;
};

// Records the route of every (src, dst) pair the graph uses, with its latency and directed links.
void record_routes(const TaskGraph& g, const std::vector<sg4::Host*>& hosts, ExecutionResult& out) {
  std::map<std::pair<int, int>, std::int32_t> route_ids;
  std::map<const sg4::Link*, std::uint32_t> link_ids;
  out.route_of_task.assign(g.tasks().size(), -1);
  for (std::size_t i = 0; i < g.tasks().size(); ++i) {
    const Task& t = g.tasks()[i];
    if (t.kind != TaskKind::FLOW) continue;
    auto [it, fresh] = route_ids.try_emplace({t.gpu, t.peer}, static_cast<std::int32_t>(out.routes.size()));
    if (fresh) {
      std::vector<sg4::Link*> links;
      FlowRoute r;
      hosts[t.gpu]->route_to(hosts[t.peer], links, &r.latency_s);
      for (const sg4::Link* l : links) {
        auto [lit, new_link] = link_ids.try_emplace(l, static_cast<std::uint32_t>(out.link_names.size()));
        if (new_link) {
          out.link_names.push_back(l->get_name());
          out.link_bw_Bps.push_back(l->get_bandwidth());
        }
        r.links.push_back(lit->second);
      }
      out.routes.push_back(std::move(r));
    }
    out.route_of_task[i] = it->second;
  }
}

}  // namespace

ExecutionResult execute(const TaskGraph& graph, const PlatformSpec& platform) {
  const auto wall_start = std::chrono::steady_clock::now();
  xbt_log_control_set("root.thres:critical");
  int argc = 1;
  char name[] = "cpsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_pure_network_model();
  const auto hosts = build_simgrid_platform(engine, platform);
  spdlog::info("platform: {} GPUs built in {:.3f} s", hosts.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count());

  ExecutionResult out;
  out.start_s.assign(graph.tasks().size(), 0);
  out.finish_s.assign(graph.tasks().size(), 0);
  record_routes(graph, hosts, out);
  const double t0 = sg4::Engine::get_clock();
  DagRunner(graph, hosts, out).run(engine);
  for (auto& t : out.start_s) t -= t0;
  for (auto& t : out.finish_s) {
    t -= t0;
    out.makespan_s = std::max(out.makespan_s, t);
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace cpsim
