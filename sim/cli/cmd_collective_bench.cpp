#include "sim/cli/cmd_collective_bench.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/cli/cmd_guard.hpp"
#include "sim/engine/executor.hpp"
#include "sim/engine/symmetry_choice.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/nccl_collectives.hpp"

namespace cpsim {
namespace {

// nccl-tests' bus bandwidth factor (PERFORMANCE.md there): what each rank's links carry per byte of `size`.
double bus_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  return double(n - 1) / n;  // allgather, reduce_scatter, alltoall
}

// One collective of nccl-tests' `size` over `gpus`, after `ready`.
RankTasks one_collective(TaskGraph& g, const std::string& op, const std::vector<int>& gpus, double size,
                         const CollectiveTag& tag, const RankTasks& ready) {
  const double n = double(gpus.size());
  if (op == "allreduce") return allreduce(g, gpus, size, tag, ready);
  if (op == "reduce_scatter") return reduce_scatter(g, gpus, size, tag, ready);
  if (op == "alltoall") return alltoall(g, gpus, size / n, tag, ready);
  return allgather(g, gpus, size / n, tag, ready);
}

}  // namespace

int collective_bench_command(const CollectiveBenchArgs& args) {
  return guarded(args.scenario, [&] {
    const Scenario s = load_scenario(args.scenario.file, args.scenario.overrides);
    const int n = args.gpus > 0 ? args.gpus : s.platform.gpu_count();
    if (n < 2 || n > s.platform.gpu_count())
      throw InputError(fmt::format("{}:1:1: platform: --gpus {}: the platform has {} GPUs (at least 2 are needed)",
                                   args.scenario.file, n, s.platform.gpu_count()));
    std::vector<int> gpus(n);
    for (int i = 0; i < n; ++i) gpus[i] = i;
    const CollectiveMachine machine(s.platform, s.parallel.collectives);
    // `count` chained collectives: collective i + 1 starts on a rank when i is done there.
    const auto build = [&](const RankSymmetry* symmetry) {
      TaskGraph g(s.platform.gpu_count(), &machine);
      g.set_task_limit(s.run.max_tasks);
      if (symmetry) g.collapse_by(*symmetry);
      RankTasks ready(n);
      for (int i = 0; i < args.count; ++i)
        ready = one_collective(g, args.op, gpus, args.bytes, {Traffic::DP, args.op, -1}, ready);
      return g;
    };
    // Collapsed as a run is (sim/engine/symmetry_choice.hpp) when the collective spans the platform: each channel
    // rotates every node's local order, so rotating every node's GPUs maps the collective onto itself; the build
    // checks that, and a collective that does not mirror is built again whole.
    std::string no_symmetry;
    auto symmetry = n == s.platform.gpu_count() ? collapse_symmetry(s, &no_symmetry) : std::nullopt;
    if (!symmetry && no_symmetry.empty()) no_symmetry = "the collective spans part of the platform";
    TaskGraph g = build(symmetry ? &*symmetry : nullptr);
    if (!g.finish_collapse(&no_symmetry)) g = build(nullptr);
    g.forget_machine();
    const ExecutionResult r = execute(g, s.platform, s.contention, {}, s.run.closed_form_flows);
    const double per_s = r.makespan_s / args.count;
    const double algbw_Bps = args.bytes / per_s;
    const nlohmann::ordered_json out = {{"op", args.op},
                                        {"gpus", n},
                                        {"bytes", args.bytes},
                                        {"count", args.count},
                                        {"contention", contention_mode_name(s.contention.mode)},
                                        {"makespan_s", r.makespan_s},
                                        {"time_per_collective_s", per_s},
                                        {"algbw_Bps", algbw_Bps},
                                        {"busbw_Bps", algbw_Bps * bus_factor(args.op, n)},
                                        {"tasks", g.task_count() * g.copies_per_task()},
                                        {"flows", g.flow_count() * g.copies_per_task()},
                                        {"flows_simulated", g.flow_count()},
                                        {"collapsed", g.symmetry() ? "one GPU per orbit of " +
                                                                         std::to_string(g.copies_per_task())
                                                                   : "no: " + no_symmetry},
                                        {"engine_wall_s", r.wall_s}};
    std::cout << out.dump(2) << "\n";
    return 0;
  });
}

}  // namespace cpsim
