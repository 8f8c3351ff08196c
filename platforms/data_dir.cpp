#include "platforms/data_dir.hpp"

#include <cstdlib>

namespace cpsim {
namespace fs = std::filesystem;

const std::vector<fs::path>& data_roots() {
  static const std::vector<fs::path> roots = [] {
    std::vector<fs::path> out;
    if (const char* dir = std::getenv("CPSIM_DATA_DIR"); dir && *dir) {
      out.emplace_back(dir);
      return out;
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      out.push_back((exe.parent_path() / ".." / "share" / "cpsim").lexically_normal());
      out.push_back(exe.parent_path() / "share" / "cpsim");
    }
    return out;
  }();
  return roots;
}

std::string find_data_file(const fs::path& relative) {
  for (const auto& root : data_roots()) {
    // The error_code overloads: a name the OS rejects (too long, bad bytes) is simply "not found", never a throw.
    std::error_code ec;
    const fs::path candidate = root / relative;
    if (!fs::is_regular_file(candidate, ec)) continue;
    const fs::path real = fs::weakly_canonical(fs::absolute(candidate, ec), ec);
    return ec ? fs::absolute(candidate).lexically_normal().string() : real.string();
  }
  return "";
}

std::string data_roots_text() {
  if (const char* dir = std::getenv("CPSIM_DATA_DIR"); dir && *dir) return std::string("$CPSIM_DATA_DIR=") + dir;
  std::string out;
  for (const auto& root : data_roots()) out += (out.empty() ? "" : ", ") + root.string();
  return out.empty() ? "(no data folder: /proc/self/exe unreadable; set CPSIM_DATA_DIR)" : out;
}

}  // namespace cpsim
