// cp.dense.algorithm: auto (cp-overview.md: Meta's production rule, "prefill passes KV, decode passes Q, chosen
// by the KV miss rate, crossover ~5%"): for a prefill of T new tokens over a persistent cache of P tokens the miss
// rate is T / (T + P); below cp.dense.auto_miss_rate_threshold the Q blocks are the cheaper thing to move (pass-Q),
// above it the KV (pass-KV, ring). Both candidates are simulated, each in a child process (SimGrid allows one
// engine per process). `cp.dense.auto_rule: simulated` (default) runs the faster one; `miss-rate` runs the rule's
// choice even when the simulation disagrees. The summary shows both, with the rule's choice beside the chosen one.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace cpsim {

// The candidates auto simulates: pass-KV (ring) and pass-Q.
inline const std::vector<CpAlgorithm> kAutoCandidates{CpAlgorithm::RING, CpAlgorithm::PASS_Q};

struct AutoChoice {
  double miss_rate = 0, threshold = 0;
  std::string rule;         // "simulated" (the faster candidate) or "miss-rate" (Meta's closed-form rule)
  CpAlgorithm rule_choice{};  // what the miss-rate rule picks
  CpAlgorithm chosen{};
  std::string reason;
  double ring_makespan_s = 0, pass_q_makespan_s = 0;  // the two candidates simulated
  CpAlgorithm simulated_faster() const {
    return ring_makespan_s <= pass_q_makespan_s ? CpAlgorithm::RING : CpAlgorithm::PASS_Q;
  }
};

// Resolves `s.cp.dense.algorithm` from auto to the chosen algorithm and returns why.
AutoChoice resolve_auto_algorithm(Scenario& s);
nlohmann::ordered_json auto_choice_json(const AutoChoice& c);

}  // namespace cpsim
