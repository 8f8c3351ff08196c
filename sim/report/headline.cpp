#include "sim/report/headline.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "sim/scenario/units.hpp"

namespace cpsim {
namespace {

std::string share(double part_s, double whole_s) {
  return fmt::format("{} ({:.1f}%)", format_time(part_s), whole_s > 0 ? 100 * part_s / whole_s : 0.0);
}

std::string phase_figure(const Scenario& s, const Metrics& m) {
  const std::string shape = fmt::format("{} layer{} of {}, cp {} x tp {}{}", s.model.layers,
                                        s.model.layers == 1 ? "" : "s", s.model.name, s.parallel.cp, s.parallel.tp,
                                        s.parallel.pp > 1 ? fmt::format(" x pp {}", s.parallel.pp) : "");
  switch (s.run.phase) {
    case Phase::PREFILL:
      // Several micro-batches: the makespan is the last one's time to first token.
      return fmt::format("{}: TTFT {} (prefill of {} tokens{}; {})", s.name, format_time(m.makespan_s), s.run.seq_len,
                         s.run.micro_batches > 1 ? fmt::format(" x {} micro-batches", s.run.micro_batches) : "", shape);
    case Phase::DECODE:
      return fmt::format("{}: time per output token {} ({} tokens in {} after a {}-token context; {})", s.name,
                         format_time(m.makespan_s / s.run.new_tokens), s.run.new_tokens, format_time(m.makespan_s),
                         s.run.seq_len, shape);
    case Phase::TRAIN:
      return fmt::format("{}: step time {} (forward + backward of {} tokens{}; {})", s.name, format_time(m.makespan_s),
                         s.run.seq_len,
                         s.run.micro_batches > 1 ? fmt::format(" x {} micro-batches", s.run.micro_batches) : "", shape);
  }
  return s.name;
}

std::string memory_line(const Metrics& m) {
  if (m.ranks.empty()) return "memory: none simulated";
  const MemoryBreakdown& b = m.ranks[m.memory_peak_gpu].memory;
  std::string terms = fmt::format("weights {}, KV cache {}, activations {}", format_bytes(b.weights_bytes),
                                  format_bytes(b.kv_cache_bytes), format_bytes(b.activations_bytes));
  if (b.comm_buffers_bytes > 0) terms += fmt::format(", comm buffers {}", format_bytes(b.comm_buffers_bytes));
  if (b.gradients_bytes > 0) terms += fmt::format(", gradients {}", format_bytes(b.gradients_bytes));
  if (b.optimizer_states_bytes > 0) terms += fmt::format(", optimizer {}", format_bytes(b.optimizer_states_bytes));
  if (b.framework_reserve_bytes > 0) terms += fmt::format(", reserve {}", format_bytes(b.framework_reserve_bytes));
  return fmt::format("memory: peak {} of {} HBM on GPU {} ({}){}", format_bytes(m.memory.need_bytes),
                     format_bytes(m.memory.capacity_bytes), m.memory_peak_gpu, terms,
                     m.memory.fits ? "" : ": DOES NOT FIT");
}

}  // namespace

int busiest_gpu(const Metrics& m) {
  int best = 0;
  for (std::size_t i = 1; i < m.ranks.size(); ++i) {
    const auto& r = m.ranks[i];
    const auto& b = m.ranks[best];
    if (r.compute_busy_s + r.exposed_comm_s > b.compute_busy_s + b.exposed_comm_s) best = static_cast<int>(i);
  }
  return best;
}

std::vector<std::string> headline_lines(const Scenario& s, const Metrics& m) {
  std::vector<std::string> lines{phase_figure(s, m)};
  if (!m.ranks.empty()) {
    const RankMetrics& r = m.ranks[busiest_gpu(m)];
    const double idle_s = std::max(0.0, m.makespan_s - r.compute_busy_s - r.exposed_comm_s);
    lines.push_back(fmt::format("  busiest GPU {}: compute {}, exposed communication {}, waiting on other ranks {}",
                                r.gpu, share(r.compute_busy_s, m.makespan_s), share(r.exposed_comm_s, m.makespan_s),
                                share(idle_s, m.makespan_s)));
  }
  lines.push_back("  " + memory_line(m));
  int relayouts = 0;
  double relayout_most = 0;
  for (const LayerMetrics& l : m.layers)
    if (l.relayout_bytes > 0) ++relayouts, relayout_most = std::max(relayout_most, l.relayout_bytes);
  if (relayouts > 0)
    lines.push_back(fmt::format("  token re-layout between layer kinds: {} layer passes, up to {} received per rank",
                                relayouts, format_bytes(relayout_most)));
  if (m.pipeline) {
    const PipelineMetrics& p = *m.pipeline;
    lines.push_back(fmt::format("  pipeline: {} stages x {} micro-batches ({}{}): bubble up to {:.1f}% of the step "
                                "(ideal (pp-1)/(v*m+pp-1) = {:.1f}%)",
                                p.stages, p.micro_batches, p.schedule,
                                p.virtual_stages > 1 ? fmt::format(", {} chunks per stage", p.virtual_stages) : "",
                                100 * p.bubble_fraction, 100 * p.ideal_bubble_fraction));
  }
  lines.push_back(fmt::format("  {} layer passes simulated ({} tasks, {} flows)", m.layers.size(), m.tasks, m.flows));
  for (const auto& v : m.volumes)
    lines.push_back(fmt::format("  {} / {}: {} received per rank per layer (formula: {})", v.layer_kind,
                                v.cp_algorithm, format_bytes(v.simulated_bytes),
                                v.formula_bytes ? format_bytes(*v.formula_bytes) : "n/a"));
  // Contention, summed over GPUs, when the run has any (docs/contention.md).
  ContentionMetrics c;
  for (const auto& r : m.ranks) {
    c.cp_overlap_with_tp_ep_s += r.contention.cp_overlap_with_tp_ep_s;
    c.flow_wait_s += r.contention.flow_wait_s;
    c.flow_slowdown_s += r.contention.flow_slowdown_s;
    c.compute_slowdown_s += r.contention.compute_slowdown_s;
  }
  if (c.cp_overlap_with_tp_ep_s + c.flow_wait_s + c.flow_slowdown_s + c.compute_slowdown_s > 0)
    lines.push_back(fmt::format("  contention ({}), summed over GPUs: CP overlapping other traffic {}, flows waiting "
                                "{}, bandwidth lost {}, compute slowdown {}",
                                contention_mode_name(s.contention.mode), format_time(c.cp_overlap_with_tp_ep_s),
                                format_time(c.flow_wait_s), format_time(c.flow_slowdown_s),
                                format_time(c.compute_slowdown_s)));
  if (!s.parallel.tp_comm_overlap_off.empty()) lines.push_back("  tp_comm_overlap off: " + s.parallel.tp_comm_overlap_off);
  return lines;
}

}  // namespace cpsim
