// Reads a scenario's `serve:` block (docs/serving.md) with located errors, checking it against the platform: the
// instances of the policy must fit the platform's GPUs.
#pragma once
#include <string>

#include "sim/serve/serve_spec.hpp"

namespace cpsim {
class MapReader;

// `dir` resolves a trace file; `gpus` is the platform's GPU count and `tp` each instance's TP degree.
ServeSpec read_serve(MapReader& r, const std::string& dir, int gpus, int tp);

}  // namespace cpsim
