#include "sim/scenario/input_files.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace cpsim {

std::string file_fnv1a64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::uint64_t h = 0xcbf29ce484222325ull;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buffer[i]);
      h *= 0x100000001b3ull;
    }
  }
  return fmt::format("{:016x}", h);
}

nlohmann::ordered_json input_files_json(const Scenario& s) {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  auto add = [&](const char* role, const std::string& path) {
    if (path.empty()) return;
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
    inputs.push_back({{"role", role},
                      {"path", absolute},
                      {"bytes", std::filesystem::file_size(path, ec)},
                      {"fnv1a64", file_fnv1a64(path)}});
  };
  add("scenario", s.file);
  add("model", s.model_file);
  add("hf_config", s.hf_config_file);
  add("platform", s.platform.xml_file);
  return inputs;
}

}  // namespace cpsim
