// Runs a TaskGraph on a SimGrid platform. Each compute task is an Exec on its GPU host lasting exactly its roofline
// time; each flow is a host-to-host Comm of its payload, so SimGrid's network model decides its duration (latency +
// bytes/bandwidth alone, max-min shares under contention). Tasks start the moment their last prerequisite ends
// (DAG mode: no actors). This header stays free of SimGrid.
#pragma once
#include <functional>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "platforms/platform_spec.hpp"
#include "sim/engine/contention.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

struct FlowRoute {
  double latency_s = 0;
  std::vector<std::uint32_t> links;  // directed links, indices into ExecutionResult::link_names
};

struct ExecutionResult {
  std::vector<double> start_s;   // per task
  std::vector<double> finish_s;  // per task
  // When a flow the contention policy held back (exclusive admission) was ready: its last prerequisite's end. Every
  // other task starts the moment it is ready, so only these are kept (a vector per task was 8 bytes of every task).
  std::unordered_map<TaskId, double> held_ready_s;
  double ready_s(TaskId id) const {
    const auto it = held_ready_s.find(id);
    return it == held_ready_s.end() ? start_s[id] : it->second;
  }
  std::vector<std::int32_t> route_of_task;  // per task: index into routes, -1 for compute
  std::vector<FlowRoute> routes;            // one per (src, dst) pair used
  std::vector<std::string> link_names;      // directed links, e.g. "n0_nvl3_UP"
  std::vector<double> link_bw_Bps;
  double makespan_s = 0;
  double wall_s = 0;  // host time spent in the engine
};

// Called now and then while the engine runs (about twice a wall-clock second): tasks done of all, simulated time.
using ProgressFn = std::function<void(std::size_t done, std::size_t total, double simulated_s)>;

// `closed_form_flows` (run.closed_form_flows): a flow alone on every link of its route ends on a timer at bytes /
// bottleneck after its latency, what the engine computes for it, without an engine comm; it joins the engine, with
// the bytes it has left, as soon as another flow needs one of its links. Off (and with link-shaping contention
// modes): every flow is an engine comm.
ExecutionResult execute(const TaskGraph& graph, const PlatformSpec& platform, const ContentionSpec& contention = {},
                        const ProgressFn& progress = {}, bool closed_form_flows = false);
// What execute() refuses before it simulates, without simulating: the platform as the engine loads it (an XML file
// through SimGrid's parser, its links' values) and a route for every GPU pair the graph sends between.
void check_executable(const TaskGraph& graph, const PlatformSpec& platform);

}  // namespace cpsim
