// A prefill, or a training step (the same forward, then the backward pass, last layer first, and the gradient
// sync): every layer's projections, CP attention, TP collectives and FFN, for every GPU. Pure function of
// (model, run, parallel plan, GPU spec) -> TaskGraph; no engine involved.
#pragma once
#include "workloads/workload.hpp"

namespace cpsim {

TaskGraph generate_layer_stack(const WorkloadInputs& in, int gpu_count);

}  // namespace cpsim
