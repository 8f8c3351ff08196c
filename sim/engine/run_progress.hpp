// A long single run's sign of life on a terminal: after the first seconds, one line redrawn in place with the tasks
// done, the simulated time reached and the wall time spent. Nothing when stderr is not a terminal (logs, CI, sweep
// workers) or the log level hides info; wall-clock time never reaches an output file.
#pragma once
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace cpsim {

// "[#####...................] 1234/5678 tasks  simulated 12.345 ms  elapsed 0:05  ETA 0:17"
std::string run_progress_line(std::size_t done, std::size_t total, double simulated_s, double elapsed_s);

class RunProgress {
 public:
  RunProgress(std::ostream& out, bool live);
  ~RunProgress();  // ends a drawn line so the next log line starts clean
  void update(std::size_t done, std::size_t total, double simulated_s);

 private:
  std::ostream& out_;
  bool live_, drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Wall time since construction, for log lines (never for an output file).
class WallClock {
 public:
  double elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// True when progress lines are wanted: stderr is a terminal and info messages are shown.
bool progress_wanted();

}  // namespace cpsim
