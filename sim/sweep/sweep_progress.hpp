// Sweep progress on stderr: a live bar (done/total, elapsed, ETA) redrawn in place when stderr is a terminal, one
// plain line per finished point otherwise (logs, CI). Wall-clock time appears here only, never in output files.
#pragma once
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace cpsim {

std::string format_clock(double seconds);  // 7 -> "0:07", 3723 -> "1:02:03"
// ETA from the mean time per finished point so far; "?" before the first one.
std::string format_eta(std::size_t done, std::size_t total, double elapsed_s);
// "[#########...........]": `done` of `total` as `width` cells
std::string bar_cells(std::size_t done, std::size_t total, int width = 24);
// "[#########...........]  5/12  elapsed 0:03  ETA 0:04  1 failed"
std::string progress_bar(std::size_t done, std::size_t total, std::size_t failed, double elapsed_s, int width = 24);

class SweepProgress {
 public:
  // `noun` starts each plain line: "sweep: [3/12] ..." (a plan search says "plan").
  SweepProgress(std::ostream& out, std::size_t total, bool live, std::string noun = "sweep");
  // `what` describes the point ("point 4 ok parallel.cp=2 ..."); failures are always printed in full.
  void point_done(const std::string& what, bool failed);
  void tick();    // redraws the bar (live mode)
  void finish();  // leaves the bar's last state on its own line

 private:
  double elapsed_s() const;
  void draw();

  std::ostream& out_;
  std::size_t total_, done_ = 0, failed_ = 0;
  std::string noun_;
  bool live_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cpsim
