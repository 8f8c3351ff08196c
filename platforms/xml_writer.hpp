// Writes a preset cluster as a SimGrid 4.1 XML platform (flat Full zone, explicit routes), loadable with
// `platform: {file: ..., gpu: ...}`. cpsim sets the network model in code (docs/platform.md), so the file holds
// no <config> block.
#pragma once
#include <string>

#include "platforms/platform_spec.hpp"

namespace cpsim {
std::string platform_xml(const PlatformSpec& spec);
}
