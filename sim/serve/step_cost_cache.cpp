#include "sim/serve/step_cost_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sim/report/atomic_file.hpp"
#include "sim/report/summary_writer.hpp"
#include "sim/scenario/input_files.hpp"

namespace cpsim {
namespace {

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

const std::string& binary_hash() {
  static const std::string hash = file_fnv1a64("/proc/self/exe");
  return hash;
}

}  // namespace

std::string default_step_cost_cache_dir() {
  if (const char* dir = std::getenv("CPSIM_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/cpsim/step-costs";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/cpsim/step-costs";
  return "";
}

std::string step_cost_cache_file(const Scenario& serve, const std::string& dir) {
  if (dir.empty()) return "";
  Scenario base = serve;
  base.serve.reset();
  nlohmann::ordered_json key = resolved_scenario_json(base);
  key.erase("name");
  key.erase("file");
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const auto& input : key["inputs"])
    if (input["role"] != "scenario") inputs.push_back(input["fnv1a64"]);
  key["inputs"] = inputs;
  key["cpsim"] = binary_hash();
  return fmt::format("{}/{:016x}.json", dir, fnv1a64(key.dump()));
}

int load_step_costs(const std::string& file, StepCostTable& table) {
  if (file.empty()) return 0;
  std::ifstream in(file);
  if (!in) return 0;
  int read = 0;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const auto& e : doc.at("steps")) {
      StepShape s;
      s.kind = e.at("kind") == "decode" ? StepShape::Kind::DECODE : StepShape::Kind::PREFILL;
      s.cp = e.at("cp");
      s.pass_q = e.at("pass_q");
      s.tokens = e.at("tokens");
      s.cached = e.at("cached");
      s.batch = e.at("batch");
      table.set(s, e.at("t_s").get<double>());
      ++read;
    }
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("step-cost cache {} is unreadable ({}); simulating again", file, e.what());
    return 0;
  }
  return read;
}

void save_step_costs(const std::string& file, const StepCostTable& table) {
  if (file.empty()) return;
  StepCostTable merged;
  load_step_costs(file, merged);  // what another run added since this one read the file
  for (const auto& [shape, t_s] : table.costs()) merged.set(shape, t_s);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto& [s, t_s] : merged.costs())
    steps.push_back({{"kind", s.kind == StepShape::Kind::DECODE ? "decode" : "prefill"},
                     {"cp", s.cp},
                     {"pass_q", s.pass_q},
                     {"tokens", s.tokens},
                     {"cached", s.cached},
                     {"batch", s.batch},
                     {"t_s", t_s}});
  try {
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    write_file_atomically(file, nlohmann::ordered_json{{"cpsim_step_costs_version", 1}, {"steps", steps}}.dump(1) + "\n");
  } catch (const std::exception& e) {
    spdlog::warn("cannot write the step-cost cache {}: {}", file, e.what());  // a cache only: the run goes on
  }
}

}  // namespace cpsim
