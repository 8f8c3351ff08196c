#include "sim/sweep_comparison.hpp"

#include <fmt/format.h>
#include <map>

namespace cpsim {

std::optional<std::size_t> comparison_axis(const SweepRecord& r) {
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    const std::string& key = r.axes[i].key;
    const std::string suffix = ".algorithm";
    if (key == "contention.mode" ||
        (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0))
      return i;
  }
  return std::nullopt;
}

std::string comparison_csv(const SweepRecord& r, std::size_t axis) {
  const auto& candidates = r.axes[axis].values;
  // Group points by the values of every other axis, in the order the groups first appear (sweep order).
  std::vector<std::vector<std::string>> group_keys;
  std::map<std::vector<std::string>, std::map<std::string, const SweepPoint*>> groups;
  for (const auto& p : r.points) {
    std::vector<std::string> key;
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (i != axis) key.push_back(p.values[i]);
    if (!groups.count(key)) group_keys.push_back(key);
    groups[key][p.values[axis]] = &p;
  }
  std::string out;
  for (std::size_t i = 0; i < r.axes.size(); ++i)
    if (i != axis) out += csv_field(r.axes[i].key) + ",";
  for (const auto& c : candidates) out += csv_field("makespan_s." + c) + ",";
  out += "fastest,fastest_makespan_s,runner_up_ratio\n";
  for (const auto& key : group_keys) {
    for (const auto& v : key) out += csv_field(v) + ",";
    std::string best, second_best;
    double best_t = 0, second_t = 0;
    for (const auto& c : candidates) {
      const auto it = groups[key].find(c);
      if (it == groups[key].end()) {
        out += "not run,";
        continue;
      }
      const SweepPoint& p = *it->second;
      if (p.status != "ok") {
        out += csv_field(p.status) + ",";
        continue;
      }
      const double t = p.metrics.at("makespan_s").get<double>();
      out += fmt::format("{},", t);
      if (best.empty() || t < best_t) {
        second_best = best, second_t = best_t;
        best = c, best_t = t;
      } else if (second_best.empty() || t < second_t) {
        second_best = c, second_t = t;
      }
    }
    out += best.empty() ? ",," : fmt::format("{},{},", csv_field(best), best_t);
    out += second_best.empty() ? "\n" : fmt::format("{}\n", second_t / best_t);
  }
  return out;
}

}  // namespace cpsim
