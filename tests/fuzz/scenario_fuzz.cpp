// libFuzzer target for the scenario loader: any input must either load or be rejected with an InputError
// (a located one-line message); anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstdint>
#include <fstream>
#include <string>
#include <unistd.h>

#include "sim/scenario.hpp"
#include "sim/yaml_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/cpsim-fuzz-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size);
  try {
    (void)cpsim::load_scenario(path);
  } catch (const cpsim::InputError& e) {
    const std::string message = e.what();
    if (message.find(':') == std::string::npos || message.find('\n') != std::string::npos) __builtin_trap();
  }
  return 0;
}
