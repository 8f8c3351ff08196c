// The seeds' closed forms for CP communication of a scenario's layers: bytes one rank receives per layer, for a
// layer kind (possibly composite, "swa+csa") and its CP algorithms, next to the formula as text. summary.json puts
// the simulated bytes beside these. The per-mode formulas are registered by each kind (workloads/attention/registry.hpp).
#pragma once
#include <optional>
#include <string>

#include "workloads/attention/registry.hpp"
#include "workloads/workload.hpp"

namespace cpsim {

struct VolumeFormula {
  double bytes = 0;
  std::string formula;
  std::optional<bool> exact;  // layers that select: whether every selection is the exact top-k
};

// The scenario's values for the formulas: per TP rank widths, MLA latent when the model has one.
CommParams comm_params(const WorkloadInputs& in);

// Per-rank received CP bytes of one layer (its kinds' components summed, with their algorithms); nullopt when a
// component has no closed form.
std::optional<VolumeFormula> cp_volume_per_rank(const WorkloadInputs& in, const LayerInfo& layer);

}  // namespace cpsim
