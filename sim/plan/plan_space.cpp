#include "sim/plan/plan_space.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

// The attention kinds of the model's layers, in first-appearance order ("swa+csa" counts as swa and csa).
std::vector<AttentionKind> kinds_of(const ModelSpec& m) {
  std::vector<AttentionKind> kinds;
  for (int l = 0; l < m.layers; ++l)
    for (AttentionKind part : m.layer_kind(l))
      if (std::find(kinds.begin(), kinds.end(), part) == kinds.end()) kinds.push_back(part);
  return kinds;
}

// One kind's choices as (label, overrides): its registered modes that have a lowering for the run's phase, USP at
// the node's Ulysses degree, pass-Q only where a persistent cache (or decode) makes it meaningful.
std::vector<std::pair<std::string, std::vector<std::string>>> kind_choices(const Scenario& s, AttentionKind kind,
                                                                         int cp, int tp) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  const AttentionKindDef& def = attention_kind(kind);
  for (const auto& mode : def.modes) {
    const CpAlgorithm a = mode.algorithm;
    const bool lowered = s.run.phase == Phase::DECODE  ? mode.decode != nullptr
                         : s.run.phase == Phase::TRAIN ? mode.backward != nullptr
                                                       : mode.prefill();
    if (!lowered) continue;
    const std::string key = def.name + "=" + algorithm_name(a);
    const std::string set = "cp." + def.name + ".algorithm=" + algorithm_name(a);
    // Pass-Q pays off against a persistent cache (prefill) or for decode; a fresh prefill has none.
    if (a == CpAlgorithm::PASS_Q && s.run.phase != Phase::DECODE && s.run.cached_tokens == 0) continue;
    if (a == CpAlgorithm::USP) {
      const int degree = std::max(1, s.platform.gpus_per_node / tp);  // Ulysses inside NVLink, ring across nodes
      if (degree <= 1 || degree >= cp || cp % degree != 0) continue;
      out.push_back({fmt::format("{}=usp({})", def.name, degree),
                     {set, fmt::format("cp.dense.ulysses_degree={}", degree)}});
      continue;
    }
    // Select-then-gather's top-k: approximate (local keys only) or exact (queries to every rank) in prefill and
    // training; a decode step's selection is always exact.
    if (a == CpAlgorithm::SELECT_GATHER && s.run.phase != Phase::DECODE) {
      out.push_back({key + "(approx)", {set, "cp." + def.name + ".exact=false"}});
      out.push_back({key + "(exact)", {set, "cp." + def.name + ".exact=true"}});
      continue;
    }
    out.push_back({key, {set}});
  }
  return out;
}

}  // namespace

std::vector<PlanCandidate> plan_candidates(const Scenario& base, int gpu_budget) {
  const int gpus = gpu_budget > 0 ? std::min(gpu_budget, base.platform.gpu_count()) : base.platform.gpu_count();
  const std::vector<AttentionKind> kinds = kinds_of(base.model);
  std::vector<PlanCandidate> out;
  for (int tp : powers_of_two_up_to(std::min(base.platform.gpus_per_node, gpus)))
    for (int cp : powers_of_two_up_to(gpus / tp)) {
      std::set<int> eps{1};
      if (base.model.moe.experts > 0) eps = {1, tp, tp * cp};
      for (int ep : eps) {
        // The product of every kind's choices, kind by kind.
        std::vector<PlanCandidate> partial{{{fmt::format("parallel.cp={}", cp), fmt::format("parallel.tp={}", tp),
                                             fmt::format("parallel.ep={}", ep)},
                                            fmt::format("cp={} tp={}{}", cp, tp,
                                                        base.model.moe.experts > 0 ? fmt::format(" ep={}", ep) : "")}};
        for (const auto& kind : kinds) {
          if (cp == 1) break;  // no CP: the algorithm does not matter, the base scenario's stays
          std::vector<PlanCandidate> next;
          for (const auto& p : partial)
            for (const auto& [label, sets] : kind_choices(base, kind, cp, tp)) {
              PlanCandidate c = p;
              c.sets.insert(c.sets.end(), sets.begin(), sets.end());
              c.label += " " + label;
              next.push_back(std::move(c));
            }
          partial = std::move(next);
        }
        out.insert(out.end(), partial.begin(), partial.end());
      }
    }
  return out;
}

std::vector<PlanCandidate> plan_refinements(const Scenario& s, const PlanCandidate& plan, bool throughput) {
  std::vector<PlanCandidate> out;
  auto variant = [&](const std::string& set, const std::string& label) {
    PlanCandidate c = plan;
    c.sets.push_back(set);
    c.label += " " + label;
    out.push_back(std::move(c));
  };
  const bool dense_cp = s.parallel.cp > 1 && s.model.uses(AttentionKind::DENSE);
  if (dense_cp && s.cp.dense.algorithm == CpAlgorithm::RING)  // the lowering that reads cp.dense.partition
    for (Partition partition : {Partition::ZIGZAG, Partition::CONTIGUOUS, Partition::STRIPED})
      if (partition != s.cp.dense.partition)
        variant(fmt::format("cp.dense.partition={}", partition_name(partition)), partition_name(partition));
  if (s.parallel.cp > 1 && s.parallel.tp > 1) {
    const bool tp_inner = s.parallel.order.front() == "tp";
    variant(tp_inner ? "parallel.order=[cp,tp,pp,dp]" : "parallel.order=[tp,cp,pp,dp]",
            tp_inner ? "order=cp-inner" : "order=tp-inner");
  }
  if (s.parallel.cp > 1 && (s.parallel.tp > 1 || s.parallel.ep > 1))
    for (const std::string& mode : kContentionModeNames.names())
      if (*kContentionModeNames.parse(mode) != s.contention.mode)
        variant(fmt::format("contention.mode={}", mode), mode);
  if (throughput && s.run.micro_batches == 1 && s.run.phase != Phase::DECODE) variant("run.micro_batches=2", "mb=2");
  return out;
}

}  // namespace cpsim
