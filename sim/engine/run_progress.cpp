#include "sim/engine/run_progress.hpp"

#include <fmt/format.h>
#include <ostream>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "sim/sweep/sweep_progress.hpp"
#include "sim/scenario/units.hpp"

namespace cpsim {

std::string run_progress_line(std::size_t done, std::size_t total, double simulated_s, double elapsed_s) {
  return fmt::format("{} {}/{} tasks  simulated {}  elapsed {}  ETA {}", bar_cells(done, total), done, total,
                     format_time(simulated_s), format_clock(elapsed_s), format_eta(done, total, elapsed_s));
}

RunProgress::RunProgress(std::ostream& out, bool live)
    : out_(out), live_(live), start_(std::chrono::steady_clock::now()) {}

RunProgress::~RunProgress() {
  if (drawn_) out_ << "\r\033[K" << std::flush;
}

void RunProgress::update(std::size_t done, std::size_t total, double simulated_s) {
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!live_ || elapsed_s < 2) return;  // short runs stay quiet
  out_ << "\r\033[K" << run_progress_line(done, total, simulated_s, elapsed_s) << std::flush;
  drawn_ = true;
}

bool progress_wanted() { return ::isatty(STDERR_FILENO) && spdlog::should_log(spdlog::level::info); }

}  // namespace cpsim
