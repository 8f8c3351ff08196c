// Transparent huge pages for cpsim's heap (see huge_pages.cpp).
#pragma once

namespace cpsim {

// Re-executes this process once with glibc's malloc asking for transparent huge pages, when the kernel gives them
// only on request (THP mode `madvise`, Debian's default) and GLIBC_TUNABLES is not already set. Returns when
// nothing is to be done or the re-execution failed (the run then goes on as it is).
void prefer_huge_pages(char** argv);

}  // namespace cpsim
