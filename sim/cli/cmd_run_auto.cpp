#include "sim/cli/cmd_run_auto.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/engine/executor.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/decode.hpp"

namespace cpsim {
namespace {

// Simulates `s` with `algorithm` in a forked child and returns its makespan. A child that cannot simulate sends its
// error's message instead, and the parent raises it as the same kind of error (an input mistake stays exit 2).
double simulate_in_child(Scenario s, CpAlgorithm algorithm) {
  s.cp.dense.algorithm = algorithm;
  enum Outcome : int { OK = 0, FAILED = 1, INPUT = 2, TOO_LARGE = 3 };
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    double makespan = -1;
    Outcome outcome = OK;
    std::string message;
    try {
      const WorkloadInputs in{s.model, s.run, s.parallel, s.cp, s.platform.gpu, &s.platform};
      makespan = execute(generate_workload(in, s.platform.gpu_count()), s.platform, s.contention).makespan_s;
    } catch (const WorkloadTooLarge& e) {
      outcome = TOO_LARGE, message = e.what();
    } catch (const InputError& e) {
      outcome = INPUT, message = e.what();
    } catch (const std::exception& e) {
      outcome = FAILED, message = e.what();
    }
    bool sent = ::write(fds[1], &makespan, sizeof makespan) == sizeof makespan;
    sent = sent && ::write(fds[1], message.data(), message.size()) == ssize_t(message.size());
    ::_exit(sent ? outcome : FAILED);
  }
  ::close(fds[1]);
  double makespan = -1;
  const ssize_t got = ::read(fds[0], &makespan, sizeof makespan);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int outcome = WIFEXITED(status) ? WEXITSTATUS(status) : FAILED;
  if (outcome == INPUT) throw InputError(message);
  if (outcome == TOO_LARGE) throw WorkloadTooLarge(message);
  if (got != sizeof makespan || outcome != OK)
    throw std::runtime_error(std::string("simulating the ") + algorithm_name(algorithm) + " candidate of cp.dense.algorithm auto failed" +
                             (message.empty() ? "" : ": " + message));
  return makespan;
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
