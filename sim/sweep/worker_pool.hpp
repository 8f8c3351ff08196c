// Runs commands as child processes, at most N at a time, capturing each one's stderr. A sweep runs one simulation
// per process this way (SimGrid allows one engine per process), and a crash or an abort in one point cannot take
// the others down.
// Why posix_spawn and not Boost.Process: Boost.Process 1.74 (Debian 12) needs Boost.Filesystem linked and its async
// pipes need Boost.Asio, and it starts children with fork() + exec(); here one poll() loop over the children's
// stderr pipes is all that is needed, and glibc's posix_spawn uses clone(CLONE_VM | CLONE_VFORK), so a parent
// holding a large sweep does not copy its page tables per child.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace cpsim {

struct WorkerOutcome {
  int exit_code = -1;       // when the child exited; -1 when it was killed by a signal
  int signal = 0;           // the signal that killed it, 0 otherwise
  std::string stderr_text;  // what it wrote on stderr (the last 64 KiB)
};

// `commands[i]` is an argv; argv[0] is the path of the program (no PATH search). The child's stdout goes to
// /dev/null. `on_done(i, outcome)` is called in completion order; `on_tick()` about every `tick_s` while waiting.
void run_workers(const std::vector<std::vector<std::string>>& commands, int max_parallel,
                 const std::function<void(std::size_t, const WorkerOutcome&)>& on_done,
                 const std::function<void()>& on_tick = {}, double tick_s = 0.1);

// The line that explains a failure: the last non-blank line of `text`, trimmed ("" if none).
std::string last_line(const std::string& text);

}  // namespace cpsim
