// Whether a run is simulated collapsed (workloads/rank_symmetry.hpp): one GPU per TP orbit, the others reported as
// its copies (the trace writer draws them rotated). Only where that is exact: the fast path on (run.fast_path), and
// a contention mode that decides from per-GPU and per-link counts alone (exclusive admission also depends on the
// order in which simultaneous flows queue, which the copies do not have).
#pragma once
#include <optional>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "workloads/rank_symmetry.hpp"

namespace cpsim {

// `why_not`: the reason when there is none.
std::optional<RankSymmetry> collapse_symmetry(const Scenario& s, std::string* why_not = nullptr);

}  // namespace cpsim
