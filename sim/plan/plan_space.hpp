// The plans `cpsim plan --search` considers for a scenario: CP, TP, PP and DP degrees that fit the GPU budget (TP
// inside a node; PP dividing the layers; DP splitting the step's micro-batches, so every plan does the same work),
// expert parallelism for MoE models, and every CP algorithm of every attention kind the model has, each as
// the `--set` overrides that turn the base scenario into that plan. Nothing here judges a plan: the loader refuses
// impossible ones, the memory model and the simulation rank the rest (the seeds' rules of thumb must come out of
// the ranking, not be written into the space).
#pragma once
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace cpsim {

struct PlanCandidate {
  std::vector<std::string> sets;  // key=value overrides on the base scenario
  std::string label;              // "cp=8 tp=2 ep=16 dense=ring dsa=allgather"
  std::vector<std::string> changed_keys;  // the keys the second stage has changed, in order
};

// `gpu_budget`: at most this many GPUs per plan (0: the platform's).
std::vector<PlanCandidate> plan_candidates(const Scenario& base, int gpu_budget);

// The second stage, for the best plans so far: the same degrees and algorithms under the other dense partitions (a
// ring's zigzag, contiguous, striped), USP's other Ulysses degrees, DSA AllGather-CP's other split, the other
// placement order (CP innermost instead of TP) when both are > 1, the other contention modes when TP or EP traffic
// meets CP traffic, a pipeline's other schedules when it has micro-batches, and, for the throughput objective,
// twice the micro-batches. Each variant changes one choice.
// `plan_scenario` is the base scenario loaded with the plan's overrides.
std::vector<PlanCandidate> plan_refinements(const Scenario& plan_scenario, const PlanCandidate& plan, bool throughput);

}  // namespace cpsim
