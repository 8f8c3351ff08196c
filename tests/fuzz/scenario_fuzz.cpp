// libFuzzer target for cpsim's input readers: any input must either load or be rejected with an InputError (a
// located one-line message); anything else (another exception, a crash, a hang, a sanitizer report) is a bug.
// The first byte picks what the rest is:
//   'S'  lines of `--set key=value` overrides, applied to a small valid scenario;
//   'X'  a SimGrid XML platform, loaded through a scenario that names it, every GPU pair's route checked;
//   else the whole input is a scenario YAML file.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "platforms/xml_platform.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace {

const std::string kModel = std::string(CPSIM_SOURCE_DIR) + "/models/llama3-8b.yaml";

std::string temp_path(const char* suffix) { return "/tmp/cpsim-fuzz-" + std::to_string(::getpid()) + suffix; }

std::string write(const char* suffix, const std::string& text) {
  const std::string path = temp_path(suffix);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

void load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  const cpsim::Scenario s = cpsim::load_scenario(write(".yaml", text), overrides);
  if (s.platform.xml) {  // what `run` checks before the engine: a route for every pair that may talk
    std::vector<std::pair<int, int>> pairs;
    for (int a = 0; a < s.platform.gpu_count() && a < 64; ++a)
      for (int b = 0; b < s.platform.gpu_count() && b < 64; ++b) pairs.emplace_back(a, b);
    s.platform.xml->check_routes(pairs);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    if (!input.empty() && input[0] == 'S') {
      std::vector<std::string> overrides;
      std::istringstream lines(input.substr(1));
      for (std::string line; std::getline(lines, line);) overrides.push_back(line);
      load("name: fuzz\nplatform: {preset: hgx-h100, nodes: 2}\nmodel: " + kModel +
               "\nrun: {phase: prefill, seq_len: 64K}\nparallel: {cp: 8}\n",
           overrides);
    } else if (!input.empty() && input[0] == 'X') {
      const std::string xml = write(".xml", input.substr(1));
      load("name: fuzz\nplatform: {file: " + xml + ", gpu: h100}\nmodel: " + kModel +
           "\nrun: {phase: prefill, seq_len: 64K}\nparallel: {cp: 1}\n");
    } else {
      load(input);
    }
  } catch (const cpsim::InputError& e) {
    const std::string message = e.what();
    if (message.find(':') == std::string::npos || message.find('\n') != std::string::npos) __builtin_trap();
  }
  return 0;
}
