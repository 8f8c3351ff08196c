#include "sim/serve/instance_model.hpp"

#include <cmath>

#include "workloads/memory.hpp"

namespace cpsim {
namespace {

std::uint64_t on_grid(std::uint64_t tokens, int cp) {
  const std::uint64_t u = StepCostTable::grid_unit(cp);
  return std::max<std::uint64_t>(u, (tokens + u - 1) / u * u);
}

MemoryBreakdown prefill_breakdown(const Scenario& serve, int cp, std::uint64_t tokens) {
  Scenario s = step_scenario(serve, {StepShape::Kind::PREFILL, cp, false, on_grid(tokens, cp), 0, 1});
  return prefill_memory({s.model, s.run, s.parallel, s.cp, s.platform.gpu, &s.platform});
}

}  // namespace

Scenario step_scenario(const Scenario& serve, const StepShape& shape) {
  Scenario s = serve;
  s.write_trace = false;
  s.serve.reset();
  s.parallel.cp = shape.cp;
  s.run.batch = shape.kind == StepShape::Kind::DECODE ? shape.batch : 1;
  s.run.seq_len = shape.tokens;
  s.run.new_tokens = 1;
  s.run.micro_batches = 1;
  if (shape.kind == StepShape::Kind::PREFILL) {
    s.run.phase = Phase::PREFILL;
    s.run.cached_tokens = shape.cached;
    s.cp.dense.algorithm = shape.pass_q ? CpAlgorithm::PASS_Q : CpAlgorithm::RING;
  } else {
    s.run.phase = Phase::DECODE;
    s.run.cached_tokens = 0;
    s.cp.dense.algorithm = shape.pass_q ? CpAlgorithm::PASS_Q : CpAlgorithm::TREE;
  }
  return s;
}

double sequence_kv_bytes(const Scenario& serve, int cp, std::uint64_t tokens) {
  return prefill_breakdown(serve, cp, tokens).kv_cache_bytes;
}

double kv_budget_bytes(const Scenario& serve, int cp, std::uint64_t max_step_tokens) {
  const MemoryBreakdown m = prefill_breakdown(serve, cp, max_step_tokens);
  return serve.platform.gpu.hbm_bytes - (m.total_bytes() - m.kv_cache_bytes);
}

}  // namespace cpsim
