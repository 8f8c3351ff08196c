#include "sim/sweep/sweep_progress.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <ostream>

namespace cpsim {

std::string format_clock(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_eta(std::size_t done, std::size_t total, double elapsed_s) {
  if (done == 0) return "?";
  return format_clock(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done));
}

std::string bar_cells(std::size_t done, std::size_t total, int width) {
  const auto filled = total == 0 ? width : static_cast<int>(static_cast<double>(width) * done / total);
  return fmt::format("[{}{}]", std::string(filled, '#'), std::string(width - filled, '.'));
}

std::string progress_bar(std::size_t done, std::size_t total, std::size_t failed, double elapsed_s, int width) {
  std::string bar = fmt::format("{} {}/{}  elapsed {}  ETA {}", bar_cells(done, total, width), done, total,
                                format_clock(elapsed_s), format_eta(done, total, elapsed_s));
  if (failed) bar += fmt::format("  {} failed", failed);
  return bar;
}

SweepProgress::SweepProgress(std::ostream& out, std::size_t total, bool live, std::string noun)
    : out_(out), total_(total), noun_(std::move(noun)), live_(live), start_(std::chrono::steady_clock::now()) {
  if (live_) draw();
}

double SweepProgress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SweepProgress::draw() { out_ << "\r\033[K" << progress_bar(done_, total_, failed_, elapsed_s()) << std::flush; }

void SweepProgress::point_done(const std::string& what, bool failed) {
  ++done_;
  if (failed) ++failed_;
  if (live_) {
    if (failed) out_ << "\r\033[K" << what << "\n";  // failures scroll above the bar
    draw();
  } else {
    out_ << fmt::format("{}: [{}/{}] {}  (elapsed {}, ETA {})\n", noun_, done_, total_, what, format_clock(elapsed_s()),
                        format_eta(done_, total_, elapsed_s()))
         << std::flush;
  }
}

void SweepProgress::tick() {
  if (live_) draw();
}

void SweepProgress::finish() {
  if (live_) {
    draw();
    out_ << "\n" << std::flush;
  }
}

}  // namespace cpsim
