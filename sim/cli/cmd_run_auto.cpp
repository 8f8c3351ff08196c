#include "sim/cli/cmd_run_auto.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/engine/child_simulation.hpp"
#include "workloads/decode.hpp"

namespace cpsim {
namespace {

// Simulates `s` with `algorithm` in a forked child and returns its makespan.
double simulate_in_child(Scenario s, CpAlgorithm algorithm) {
  s.cp.dense.algorithm = algorithm;
  const std::string what = std::string("the ") + algorithm_name(algorithm) + " candidate of cp.dense.algorithm auto";
  return simulate_makespans_in_children({s}, 1, what.c_str()).front();
}

}  // namespace

AutoChoice resolve_auto_algorithm(Scenario& s) {
  AutoChoice c;
  const double T = double(s.run.seq_len), P = double(s.run.cached_tokens);
  c.miss_rate = T / (T + P);
  c.threshold = s.cp.dense.auto_miss_rate_threshold;
  c.rule = s.cp.dense.auto_by_miss_rate ? "miss-rate" : "simulated";
  c.rule_choice = c.miss_rate < c.threshold ? CpAlgorithm::PASS_Q : CpAlgorithm::RING;
  c.ring_makespan_s = simulate_in_child(s, CpAlgorithm::RING);
  c.pass_q_makespan_s = simulate_in_child(s, CpAlgorithm::PASS_Q);
  const double ring = c.ring_makespan_s, pass_q = c.pass_q_makespan_s;
  const CpAlgorithm faster = c.simulated_faster();
  const std::string rule_text = fmt::format(
      "KV miss rate T/(T+cached) = {}/({}+{}) = {:.4f} is {} the threshold {}: {}", T, T, P, c.miss_rate,
      c.miss_rate < c.threshold ? "below" : "at or above", c.threshold,
      c.rule_choice == CpAlgorithm::PASS_Q ? "pass Q (the new queries are smaller than the KV)" : "pass KV (ring attention)");
  if (s.cp.dense.auto_by_miss_rate) {
    c.chosen = c.rule_choice;
    c.reason = rule_text;
  } else {
    c.chosen = faster;
    c.reason = fmt::format("simulated faster: {} ({:.6g} s against {:.6g} s); the miss-rate rule: {}",
                           algorithm_name(faster),
                           std::min(ring, pass_q), std::max(ring, pass_q), rule_text);
  }
  s.cp.dense.algorithm = c.chosen;
  spdlog::info("auto: {} (ring {:.6g} s, pass-q {:.6g} s simulated)", c.reason, ring, pass_q);
  return c;
}

nlohmann::ordered_json auto_choice_json(const AutoChoice& c) {
  return {{"rule", c.rule},
          {"miss_rate", c.miss_rate},
          {"threshold", c.threshold},
          {"miss_rate_rule_choice", algorithm_name(c.rule_choice)},
          {"chosen", algorithm_name(c.chosen)},
          {"reason", c.reason},
          {"candidates_makespan_s",
           {{algorithm_name(CpAlgorithm::RING), c.ring_makespan_s},
            {algorithm_name(CpAlgorithm::PASS_Q), c.pass_q_makespan_s}}},
          {"simulated_faster", algorithm_name(c.simulated_faster())}};
}

}  // namespace cpsim
