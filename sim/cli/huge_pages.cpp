// Large runs touch hundreds of megabytes of fresh memory (the task graph, the engine's activities, the per-task
// results). With 4 KiB pages every first touch is a page fault, and in virtual machines a fault is slow: on the
// 1,024-GPU benchmark case they were a quarter of the wall time (6.5 s; with huge pages 5.1 s, docs/performance.md).
// glibc's malloc asks for huge pages (madvise) when its tunable glibc.malloc.hugetlb is 1, but tunables are read
// only at start-up, hence one re-execution with it set. Results do not depend on it.
#include "sim/cli/huge_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace cpsim {

namespace {
bool thp_on_request_only() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(mode, line) && line.find("[madvise]") != std::string::npos;
}
}  // namespace

void prefer_huge_pages(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr || !thp_on_request_only()) return;
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 0) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // exec failed: run as we are
}

}  // namespace cpsim
