// The seeds' closed forms for CP communication: bytes one rank receives per layer, for a layer kind and CP
// algorithm, next to the formula as text. summary.json puts the simulated bytes beside these.
#pragma once
#include <optional>
#include <string>

#include "workloads/prefill.hpp"

namespace cpsim {

struct VolumeFormula {
  double bytes = 0;
  std::string formula;
};

// Per-rank received CP bytes of one layer; nullopt when no closed form is known for the pair.
std::optional<VolumeFormula> cp_volume_per_rank(const WorkloadInputs& in, const std::string& layer_kind,
                                                const std::string& cp_algorithm);

}  // namespace cpsim
