#include "sim/cli/cmd_plan.hpp"

#include <fmt/format.h>
#include <iostream>
#include <set>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {
namespace {

// "NVLink (node 0)" when a group stays in one node, else "NIC rails (nodes 0-3)".
std::string links_of(const Scenario& s, const std::vector<int>& gpus) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(s.platform.gpus[g].node);
  if (nodes.size() == 1) return fmt::format("NVLink (node {})", *nodes.begin());
  return fmt::format("NIC rails across {} nodes ({}..{})", nodes.size(), *nodes.begin(), *nodes.rbegin());
}

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) {
    if (!out.empty()) out += ' ';
    out += std::to_string(x);
  }
  return out;
}

}  // namespace

int plan_command(const ScenarioArgs& args) {
  try {
    const Scenario s = load_scenario(args.file, args.overrides);
    const ParallelSpec& p = s.parallel;
    const RankLayout layout(p);
    const int replica_gpus = layout.used_gpus();
    std::string order;
    for (const auto& o : p.order) order += (order.empty() ? "" : ", ") + o;
    std::cout << fmt::format("{}: dp {} x pp {} x cp {} x tp {} = {} of {} GPUs, order [{}] (innermost first)\n\n",
                             s.name, p.dp, p.pp, p.cp, p.tp, replica_gpus * p.dp * p.pp, s.platform.gpu_count(), order);
    std::cout << fmt::format("{:>5} {:>5} {:>6} {:>4} {:>4} {:>4} {:>4}\n", "gpu", "node", "local", "dp", "pp", "cp", "tp");
    for (int gpu = 0; gpu < replica_gpus * p.dp * p.pp; ++gpu) {
      const auto c = layout.coord(gpu);
      const auto [dp, pp] = layout.replica(gpu);
      std::cout << fmt::format("{:>5} {:>5} {:>6} {:>4} {:>4} {:>4} {:>4}\n", gpu, s.platform.gpus[gpu].node,
                               s.platform.gpus[gpu].local_gpu, dp, pp, c.cp, c.tp);
    }
    std::cout << (p.simulated_dp > 1 ? fmt::format("\nsimulated: the {} dp replicas of pp stage 0 (groups of dp 0 shown, "
                                                   "gradient groups across them)\n", p.simulated_dp)
                                     : std::string("\nsimulated replica (dp 0, pp 0):\n"));
    for (int tp = 0; tp < p.tp; ++tp) {
      const auto g = layout.cp_group(tp);
      std::cout << fmt::format("  CP group tp{}: gpus {}  -> {}\n", tp, list(g), links_of(s, g));
    }
    for (int cp = 0; cp < p.cp; ++cp) {
      const auto g = layout.tp_group(cp);
      std::cout << fmt::format("  TP group cp{}: gpus {}  -> {}\n", cp, list(g), links_of(s, g));
    }
    if (p.ep > 1)
      for (const auto& g : layout.ep_groups())
        std::cout << fmt::format("  EP group ({} GPUs): gpus {}  -> {}\n", g.size(), list(g), links_of(s, g));
    if (p.grad_sync != GradSync::NONE && p.dp * p.cp > 1)
      for (int tp = 0; tp < p.tp; ++tp) {
        std::vector<int> g;  // the DP x CP gradient all-reduce group of this TP rank (workloads/gradient_sync.cpp)
        for (int r = 0; r < p.simulated_dp; ++r)
          for (int cp = 0; cp < p.cp; ++cp) g.push_back(r * replica_gpus + layout.gpu(cp, tp));
        std::cout << fmt::format("  gradient group tp{} (dp x cp, grad_sync {}): gpus {}  -> {}\n", tp, kGradSyncNames.name(p.grad_sync),
                                 list(g), links_of(s, g));
      }
    return 0;
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

}  // namespace cpsim
