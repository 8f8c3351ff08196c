#include "sim/sweep/sweep_comparison.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <map>

namespace cpsim {

std::optional<std::size_t> comparison_axis(const SweepRecord& r) {
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    const std::string& key = r.axes[i].key;
    const std::string suffix = ".algorithm";
    if (key == "contention.mode" || key == "parallel.grad_sync" ||
        (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0))
      return i;
  }
  return std::nullopt;
}

namespace {

// Points grouped by the values of every other axis, groups in the order they first appear (sweep order).
struct Groups {
  std::vector<std::vector<std::string>> keys;
  std::map<std::vector<std::string>, std::map<std::string, const SweepPoint*>> by_key;  // key -> candidate -> point
};

Groups group_points(const SweepRecord& r, std::size_t axis) {
  Groups g;
  for (const auto& p : r.points) {
    std::vector<std::string> key;
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (i != axis) key.push_back(p.values[i]);
    if (!g.by_key.count(key)) g.keys.push_back(key);
    g.by_key[key][p.values[axis]] = &p;
  }
  return g;
}

std::string other_axes_header(const SweepRecord& r, std::size_t axis) {
  std::string out;
  for (std::size_t i = 0; i < r.axes.size(); ++i)
    if (i != axis) out += csv_field(r.axes[i].key) + ",";
  return out;
}

double metric_or_zero(const SweepPoint& p, const std::string& key) {
  const auto it = p.metrics.find(key);
  return it != p.metrics.end() && it->is_number() ? it->get<double>() : 0.0;
}

// What explains a candidate's time beside its makespan (docs/contention.md, docs/outputs.md).
const char* const kExplainingMetrics[] = {
    "critical_exposed_comm_s",          "critical_idle_s",
    "contention.cp_overlap_with_tp_ep_s", "contention.flow_wait_s",
    "contention.flow_slowdown_s",       "contention.compute_slowdown_s",
};

}  // namespace

std::string comparison_csv(const SweepRecord& r, std::size_t axis) {
  const auto& candidates = r.axes[axis].values;
  auto [group_keys, groups] = group_points(r, axis);
  std::string out = other_axes_header(r, axis);
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

std::string ranking_csv(const SweepRecord& r, std::size_t axis) {
  auto [group_keys, groups] = group_points(r, axis);
  std::string out = other_axes_header(r, axis) + "rank," + csv_field(r.axes[axis].key) + ",makespan_s,vs_fastest";
  for (const char* m : kExplainingMetrics) out += std::string(",") + m;
  out += "\n";
  for (const auto& key : group_keys) {
    std::vector<const SweepPoint*> ranked;
    for (const auto& c : r.axes[axis].values)
      if (const auto it = groups[key].find(c); it != groups[key].end() && it->second->status == "ok")
        ranked.push_back(it->second);
    // Fastest first; ties keep the axis order.
    std::stable_sort(ranked.begin(), ranked.end(), [](const SweepPoint* a, const SweepPoint* b) {
      return a->metrics.at("makespan_s").get<double>() < b->metrics.at("makespan_s").get<double>();
    });
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const SweepPoint& p = *ranked[i];
      const double t = p.metrics.at("makespan_s").get<double>();
      for (const auto& v : key) out += csv_field(v) + ",";
      out += fmt::format("{},{},{},{}", i + 1, csv_field(p.values[axis]), t,
                         t / ranked.front()->metrics.at("makespan_s").get<double>());
      for (const char* m : kExplainingMetrics) out += fmt::format(",{}", metric_or_zero(p, m));
      out += "\n";
    }
  }
  return out;
}

}  // namespace cpsim
