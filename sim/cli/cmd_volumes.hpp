// `cpsim volumes`: prints the per-rank per-layer CP communication of every attention mode (sim/report/volume_table.hpp).
#pragma once
#include <map>
#include <string>

namespace cpsim {

struct VolumesArgs {
  std::string preset = "seed";
  bool json = false;
  std::map<std::string, std::string> values;  // option name -> text, e.g. "seq-len" -> "1M"
};

int volumes_command(const VolumesArgs& args);

}  // namespace cpsim
