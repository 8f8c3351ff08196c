// What every workload builder starts from (prefill / training layer stacks, decode steps): its inputs, the rank
// layout, the collective machine the graph lowers its collectives for (none without a platform: closed-form runs),
// and the graph, with the scenario's task limit set.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "workloads/nccl_collectives.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/task_graph.hpp"
#include "workloads/workload.hpp"

namespace cpsim {

class GraphBuilder {
 protected:
  GraphBuilder(const WorkloadInputs& in, int gpu_count)
      : in_(in),
        layout_(in.parallel),
        machine_(in.platform ? std::optional<CollectiveMachine>(std::in_place, *in.platform, in.parallel.collectives)
                             : std::nullopt),
        g_(gpu_count, machine_ ? &*machine_ : nullptr) {
    g_.set_task_limit(in.run.max_tasks);
    if (in.symmetry) g_.collapse_by(*in.symmetry);
  }

  // The finished graph; it no longer points at the machine, which dies with the builder.
  TaskGraph finish() {
    std::string why_not;
    if (!g_.finish_collapse(&why_not)) throw SymmetryBroken(why_not);
    g_.forget_machine();
    return std::move(g_);
  }

  const WorkloadInputs& in_;
  RankLayout layout_;
  std::optional<CollectiveMachine> machine_;  // before g_: the graph lowers its collectives for it
  TaskGraph g_;
};

}  // namespace cpsim
