// The seeds' closed forms for CP communication of a scenario's layers: bytes one rank receives per layer, for a
// layer kind (possibly composite, "swa+csa") and its CP algorithms, next to the formula as text. summary.json puts
// the simulated bytes beside these. The per-mode formulas live in hetero_volumes.hpp.
#pragma once
#include <optional>
#include <string>

#include "workloads/hetero_volumes.hpp"
#include "workloads/prefill.hpp"

namespace cpsim {

struct VolumeFormula {
  double bytes = 0;
  std::string formula;
};

// The scenario's values for the formulas: per TP rank widths, MLA latent when the model has one.
CommParams comm_params(const WorkloadInputs& in);

// Per-rank received CP bytes of one layer of `layer_kind` (components summed); nullopt when a component has no
// closed form. `cp_algorithm` is the layer's label ("boundary+allgather" for a composite kind).
std::optional<VolumeFormula> cp_volume_per_rank(const WorkloadInputs& in, const std::string& layer_kind,
                                                const std::string& cp_algorithm);

}  // namespace cpsim
