// Which candidate wins each point of a sweep: when one axis chooses between alternatives (a CP algorithm, a
// contention mode), comparison.csv has one row per combination of the other axes, each candidate's makespan (or its
// status when it could not run) and the fastest one; ranking.csv lists them fastest first with what explains the
// gaps. Derived from the sweep record, so a merge of shards writes
// the same file.
#pragma once
#include <optional>
#include <string>

#include "sim/sweep/sweep_table.hpp"

namespace cpsim {

// The axis compared: the first axis whose key ends in ".algorithm" or is "contention.mode" or "parallel.grad_sync";
// nullopt if none.
std::optional<std::size_t> comparison_axis(const SweepRecord& r);
std::string comparison_csv(const SweepRecord& r, std::size_t axis);
// ranking.csv: per combination of the other axes, the candidates that ran, fastest first (rank, makespan, ratio to
// the fastest) with the metrics that explain the gaps: the critical GPU's exposed comm and idle time and the
// contention totals (CP overlap with TP/EP, flow wait, bandwidth lost, compute slowdown; 0 when absent).
std::string ranking_csv(const SweepRecord& r, std::size_t axis);

}  // namespace cpsim
