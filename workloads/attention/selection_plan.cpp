// cp.csa / cp.dsa: `exact` chooses select-then-gather's exact distributed top-k (registry.hpp).
#include <fmt/format.h>

#include "sim/scenario/yaml_reader.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {

void read_selection_plan(MapReader& block, CpPlan& plan, AttentionKind kind) {
  if (!block.has("exact")) return;
  const bool exact = block.flag_or("exact", false);
  if (plan.algorithm(kind) != CpAlgorithm::SELECT_GATHER)
    block.fail("exact", fmt::format("applies to select-gather; {} is exact already", algorithm_name(plan.algorithm(kind))));
  if (exact) plan.exact_selection.insert(kind);
}

std::vector<std::pair<std::string, std::string>> selection_summary_fields(const CpPlan& plan, AttentionKind kind) {
  const bool exact = plan.algorithm(kind) != CpAlgorithm::SELECT_GATHER || plan.exact_selection.count(kind) > 0;
  return {{"exact", exact ? "true" : "false"}};
}

}  // namespace cpsim
