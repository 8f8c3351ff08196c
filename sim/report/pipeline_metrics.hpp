// Pipeline stages in the outputs (parallel.pp > 1): per stage, the time it runs a pass (a micro-batch's forward or
// backward through one of its chunks: from the pass's first task to its last) and the bubble, the rest of the step
// in which it runs none, waiting for its neighbours; next to the schedule's ideal bubble fraction.
#pragma once
#include <vector>

#include "sim/report/metrics.hpp"

namespace cpsim {

// Fills m.pipeline from the per-layer windows in m.layers (compute_metrics calls it).
void add_pipeline_metrics(const Scenario& s, Metrics& m);

}  // namespace cpsim
