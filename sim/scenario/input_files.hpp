// The files a run read, for summary.json's `inputs`: each one's absolute path, size and a content hash (64-bit
// FNV-1a, hex), so two outputs can be told apart by what they were made from, whatever folder they ran in.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "sim/scenario/scenario.hpp"

namespace cpsim {

// FNV-1a 64 of a file's bytes, as 16 hex digits; "" when it cannot be read.
std::string file_fnv1a64(const std::string& path);
nlohmann::ordered_json input_files_json(const Scenario& s);

}  // namespace cpsim
