// Where cpsim's bundled data lives (platforms/, models/, scenarios/): found relative to the running executable, never
// through a path compiled into it, so an installed or copied tree works from any folder with the sources gone.
//   1. $CPSIM_DATA_DIR, when set: the only root (a user pointing at their own copy wants no silent fallback);
//   2. <exe>/../share/cpsim: an installed tree (`cmake --install build --prefix P` puts cpsim in P/bin);
//   3. <exe>/share/cpsim: a build tree (CMake links build/share/cpsim/* to the source folders at configure time).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace cpsim {

const std::vector<std::filesystem::path>& data_roots();

// The first `root / relative` that is a regular file, with symbolic links resolved (a build tree's links point
// into the sources, and outputs name the real file); "" when no root has it.
std::string find_data_file(const std::filesystem::path& relative);

// The roots as one line, for "not found" messages ("$CPSIM_DATA_DIR=/x" or "/p/share/cpsim, /b/share/cpsim").
std::string data_roots_text();

}  // namespace cpsim
