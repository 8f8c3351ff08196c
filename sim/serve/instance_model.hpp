// What one serving instance (cp x tp GPUs) is, in the terms of cpsim's single-step simulation: the scenario of each
// step shape it runs (docs/serving.md), and its KV memory from the memory model (workloads/memory.hpp).
#pragma once
#include <cstdint>

#include "sim/scenario/scenario.hpp"
#include "sim/serve/step_costs.hpp"

namespace cpsim {

// The scenario cpsim simulates for one step: the serve scenario's model, platform and plan with the instance's
// parallel.cp, a prefill of `tokens` new tokens after `cached` (pass-KV = ring, or pass-Q), or one decode step of
// `batch` sequences at a context of `tokens` (tree or pass-Q). The instance runs on the platform's first cp x tp
// GPUs: instances are placed on disjoint GPUs and links, so one stands for all (docs/serving.md).
Scenario step_scenario(const Scenario& serve, const StepShape& shape);

// Per GPU of an instance of `cp`: the KV cache of one sequence of `tokens` tokens (the memory model's kv_cache term
// at that length, rounded up to the grid unit), and what is left for KV once weights, the framework reserve and
// the working set (activations, CP buffers) of a prefill step of `max_step_tokens` are held.
double sequence_kv_bytes(const Scenario& serve, int cp, std::uint64_t tokens);
double kv_budget_bytes(const Scenario& serve, int cp, std::uint64_t max_step_tokens);

}  // namespace cpsim
