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
  // The step's work stays the base scenario's: `sequences` of `batch` per step over all replicas, so dp replicas
  // split its micro-batches (dp must divide them). Decode keeps its batch and degrees outside cp and tp.
  const bool decode = base.run.phase == Phase::DECODE;
  const int step_batches = base.run.micro_batches * base.parallel.dp;
  std::vector<PlanCandidate> out;
  for (int tp : powers_of_two_up_to(std::min(base.platform.gpus_per_node, gpus)))
    for (int cp : powers_of_two_up_to(gpus / tp))
      for (int pp : powers_of_two_up_to(decode ? 1 : gpus / (tp * cp))) {
        if (base.model.layers % pp != 0) continue;
        for (int dp : powers_of_two_up_to(decode ? base.parallel.dp : gpus / (tp * cp * pp))) {
          if (decode ? dp != base.parallel.dp : step_batches % dp != 0) continue;
          std::set<int> eps{1};
          if (base.model.moe.experts > 0) eps = {1, tp, tp * cp};
          for (int ep : eps) {
            PlanCandidate degrees{{fmt::format("parallel.cp={}", cp), fmt::format("parallel.tp={}", tp),
                                   fmt::format("parallel.ep={}", ep), fmt::format("parallel.pp={}", pp),
                                   fmt::format("parallel.dp={}", dp)},
                                  fmt::format("cp={} tp={}", cp, tp), {}};
            if (pp > 1) degrees.label += fmt::format(" pp={}", pp);
            if (dp > 1) degrees.label += fmt::format(" dp={}", dp);
            if (base.model.moe.experts > 0) degrees.label += fmt::format(" ep={}", ep);
            if (!decode && step_batches / dp != base.run.micro_batches)
              degrees.sets.push_back(fmt::format("run.micro_batches={}", step_batches / dp));
            // Gradient sync simulates the dp replicas of stage 0 side by side: dp inside pp.
            if (pp > 1 && dp > 1) degrees.sets.push_back("parallel.order=[tp,cp,dp,pp]");
            // The product of every kind's choices, kind by kind.
            std::vector<PlanCandidate> partial{degrees};
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
      }
  return out;
}

std::vector<PlanCandidate> plan_refinements(const Scenario& s, const PlanCandidate& plan, bool throughput) {
  std::vector<PlanCandidate> out;
  // One choice changed: its `key=value` replaces the plan's own for that key. A choice changed once along a path of
  // refinements stays (the search moves on to the other choices instead of going back and forth).
  auto variant = [&](const std::vector<std::string>& sets, const std::string& label) {
    const std::string key = sets.front().substr(0, sets.front().find('='));
    if (std::find(plan.changed_keys.begin(), plan.changed_keys.end(), key) != plan.changed_keys.end()) return;
    PlanCandidate c = plan;
    for (const std::string& set : sets) {
      const std::string prefix = set.substr(0, set.find('=') + 1);
      c.sets.erase(std::remove_if(c.sets.begin(), c.sets.end(),
                                  [&](const std::string& old) { return old.rfind(prefix, 0) == 0; }),
                   c.sets.end());
      c.sets.push_back(set);
    }
    c.changed_keys.push_back(key);
    c.label += " " + label;
    out.push_back(std::move(c));
  };
  const int cp = s.parallel.cp;
  const bool dense_cp = cp > 1 && s.model.uses(AttentionKind::DENSE);
  if (dense_cp && s.cp.dense.algorithm == CpAlgorithm::RING)  // the lowering that reads cp.dense.partition
    for (Partition partition : {Partition::ZIGZAG, Partition::CONTIGUOUS, Partition::STRIPED})
      if (partition != s.cp.dense.partition)
        variant({fmt::format("cp.dense.partition={}", partition_name(partition))}, partition_name(partition));
  // USP's other Ulysses degrees (the first stage tries the node's).
  if (dense_cp && s.cp.dense.algorithm == CpAlgorithm::USP)
    for (int u = 2; u < cp; u *= 2)
      if (u != s.cp.dense.ulysses_degree && cp % u == 0)
        variant({fmt::format("cp.dense.ulysses_degree={}", u)}, fmt::format("ulysses={}", u));
  // DSA's AllGather-CP splits the sequence round-robin or zigzag (SGLang's two modes).
  if (cp > 1 && s.model.uses(AttentionKind::DSA) && s.cp.algorithm(AttentionKind::DSA) == CpAlgorithm::ALLGATHER)
    for (DsaSplit split : {DsaSplit::ROUND_ROBIN, DsaSplit::ZIGZAG})
      if (split != s.cp.dsa_partition)
        variant({fmt::format("cp.dsa.partition={}", kDsaSplitNames.name(split))}, kDsaSplitNames.name(split));
  if (cp > 1 && s.parallel.tp > 1) {  // the two innermost degrees swapped, the outer ones kept
    std::vector<std::string> order = s.parallel.order;
    std::swap(order[0], order[1]);
    variant({fmt::format("parallel.order=[{}]", fmt::join(order, ","))},
            order.front() == "cp" ? "order=cp-inner" : "order=tp-inner");
  }
  if (cp > 1 && (s.parallel.tp > 1 || s.parallel.ep > 1))
    for (const std::string& mode : kContentionModeNames.names())
      if (*kContentionModeNames.parse(mode) != s.contention.mode)
        variant({fmt::format("contention.mode={}", mode)}, mode);
  // A pipeline's other schedules, where there are micro-batches to schedule.
  if (s.parallel.pp > 1 && s.run.micro_batches > 1)
    for (PipelineSchedule schedule : {PipelineSchedule::ONE_F_ONE_B, PipelineSchedule::INTERLEAVED, PipelineSchedule::GPIPE})
      if (schedule != s.parallel.pp_schedule)
        variant({fmt::format("parallel.pp_schedule={}", kPipelineScheduleNames.name(schedule))},
                kPipelineScheduleNames.name(schedule));
  if (throughput && s.run.phase != Phase::DECODE)
    variant({fmt::format("run.micro_batches={}", 2 * s.run.micro_batches)}, fmt::format("mb={}", 2 * s.run.micro_batches));
  return out;
}

}  // namespace cpsim
