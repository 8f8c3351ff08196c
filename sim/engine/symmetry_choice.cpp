#include "sim/engine/symmetry_choice.hpp"

#include <spdlog/spdlog.h>

namespace cpsim {

std::optional<RankSymmetry> collapse_symmetry(const Scenario& s, std::string* why_not) {
  std::string reason;
  std::optional<RankSymmetry> symmetry;
  if (!s.run.fast_path) reason = "run.fast_path is off";
  else if (s.contention.mode == ContentionMode::EXCLUSIVE)
    reason = "exclusive admission depends on the order of simultaneous flows";
  else symmetry = tp_rotation_symmetry(s.parallel, s.platform, &reason);
  if (!symmetry) spdlog::debug("symmetry: none ({})", reason);
  if (why_not) *why_not = reason;
  return symmetry;
}

}  // namespace cpsim
