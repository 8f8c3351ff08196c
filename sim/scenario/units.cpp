#include "sim/scenario/units.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <utility>
#include <vector>

namespace cpsim {
namespace {

// Splits "450GBps" into 450 and "GBps"; rejects empty numbers, negatives and trailing garbage in the number.
std::optional<std::pair<double, std::string>> split_number(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  std::string unit = text.substr(used);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  return std::make_pair(value, unit);
}

std::optional<double> scaled(const std::string& text, const std::vector<std::pair<std::string, double>>& units,
                             bool unit_required) {
  auto parts = split_number(text);
  if (!parts) return std::nullopt;
  if (parts->second.empty()) return unit_required ? std::nullopt : std::optional<double>(parts->first);
  for (const auto& [suffix, factor] : units)
    if (parts->second == suffix) return parts->first * factor;  // may be inf (1e300GBps): callers check ranges
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_count(const std::string& text) {
  auto v = scaled(text, {{"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"k", 1024.0}}, false);
  if (!v || *v != std::floor(*v) || *v >= 1.8e19) return std::nullopt;  // the reader checks the range
  return static_cast<std::uint64_t>(*v);
}

std::optional<double> parse_bandwidth_Bps(const std::string& text) {
  return scaled(text,
                {{"Bps", 1.0}, {"kBps", 1e3}, {"KBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9}, {"TBps", 1e12},
                 {"KiBps", 1024.0}, {"MiBps", 1048576.0}, {"GiBps", 1073741824.0}, {"TiBps", 1099511627776.0},
                 {"bps", 1.0 / 8}, {"kbps", 1e3 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
                 {"Tbps", 1e12 / 8}},
                true);
}

std::optional<double> parse_time_s(const std::string& text) {
  return scaled(text, {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}}, true);
}

std::optional<double> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double plain = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0' && std::isfinite(plain)) return plain;
  return parse_time_s(text);
}

std::optional<double> parse_size_bytes(const std::string& text) {
  return scaled(text,
                {{"B", 1.0}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
                 {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}},
                false);
}

std::optional<double> parse_flops(const std::string& text) {
  return scaled(text, {{"f", 1.0}, {"kf", 1e3}, {"Kf", 1e3}, {"Mf", 1e6}, {"Gf", 1e9}, {"Tf", 1e12}, {"Pf", 1e15}}, false);
}

std::string format_bytes(double bytes) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 4) {
    bytes /= 1024.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, names[i]);
}

std::string format_time(double t_s) {
  if (t_s >= 1.0) return fmt::format("{:.3f} s", t_s);
  if (t_s >= 1e-3) return fmt::format("{:.3f} ms", t_s * 1e3);
  return fmt::format("{:.3f} us", t_s * 1e6);
}

}  // namespace cpsim
