#include "sim/sweep/sweep_table.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <set>

#include "sim/sweep/sweep_metrics.hpp"

namespace cpsim {
namespace {

using ojson = nlohmann::ordered_json;

std::string cell(const ojson& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return v.dump();  // numbers as in sweep.json (shortest round-trip form), booleans as true/false
}

ojson axes_json(const std::vector<SweepAxis>& axes) {
  ojson a = ojson::array();
  for (const auto& axis : axes) {
    ojson entry = {{"key", axis.key}, {"values", axis.values}};
    if (axis.zipped) entry["zip"] = true;  // absent otherwise: older sweep.json files read the same
    a.push_back(entry);
  }
  return a;
}

}  // namespace

std::string point_dir(std::size_t index) { return "points/" + std::to_string(index); }

bool record_failure(SweepPoint& p, const WorkerOutcome& w) {
  const std::string line = last_line(w.stderr_text);
  if (w.signal != 0) {
    p.status = "crashed";
    p.error = fmt::format("killed by signal {} ({}){}", w.signal, strsignal(w.signal), line.empty() ? "" : ": " + line);
  } else if (w.exit_code != 0) {
    p.status = w.exit_code == 2 ? "invalid" : "failed";
    p.error = line.empty() ? fmt::format("exited with code {}", w.exit_code) : line;
  } else {
    return false;
  }
  p.metrics = ojson::object();
  return true;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

ojson sweep_json(const SweepRecord& r) {
  ojson j;
  j["cpsim_sweep_version"] = 1;
  j["scenario"] = r.scenario;
  j["scenario_fnv1a64"] = r.scenario_fnv1a64;
  j["cpsim_version"] = r.cpsim_version;
  j["set"] = r.overrides;
  j["traces"] = r.traces;
  j["axes"] = axes_json(r.axes);
  j["points_total"] = point_count(r.axes);
  if (r.shard) j["shard"] = {{"index", r.shard->index}, {"count", r.shard->count}};
  std::map<std::string, std::size_t> counts;
  for (const auto& p : r.points) ++counts[p.status];
  j["status_counts"] = counts;
  ojson points = ojson::array();
  for (const auto& p : r.points) {
    ojson values = ojson::object();
    for (std::size_t a = 0; a < r.axes.size(); ++a) values[r.axes[a].key] = p.values[a];
    points.push_back({{"index", p.index},
                      {"values", values},
                      {"status", p.status},
                      {"error", p.error},
                      {"dir", point_dir(p.index)},
                      {"metrics", p.metrics}});
  }
  j["points"] = points;
  return j;
}

SweepRecord sweep_from_json(const ojson& j, const std::string& where) {
  SweepRecord r;
  try {
    if (j.at("cpsim_sweep_version").get<int>() != 1) throw std::runtime_error("unsupported cpsim_sweep_version");
    r.scenario = j.at("scenario").get<std::string>();
    r.scenario_fnv1a64 = j.at("scenario_fnv1a64").get<std::string>();
    r.cpsim_version = j.at("cpsim_version").get<std::string>();
    r.overrides = j.at("set").get<std::vector<std::string>>();
    r.traces = j.at("traces").get<bool>();
    for (const auto& a : j.at("axes"))
      r.axes.push_back({a.at("key").get<std::string>(), a.at("values").get<std::vector<std::string>>(), "--axis:1:1",
                        a.contains("zip") && a.at("zip").get<bool>()});
    if (j.contains("shard"))
      r.shard = Shard{j["shard"].at("index").get<std::size_t>(), j["shard"].at("count").get<std::size_t>()};
    const std::size_t total = point_count(r.axes);
    for (const auto& p : j.at("points")) {
      SweepPoint pt;
      if (!p.at("index").is_number_unsigned()) throw std::runtime_error("a point index is not a whole number");
      pt.index = p.at("index").get<std::size_t>();
      if (pt.index >= total) throw std::runtime_error(fmt::format("point {} is outside the sweep", pt.index));
      for (const auto& axis : r.axes) pt.values.push_back(p.at("values").at(axis.key).get<std::string>());
      if (pt.values != point_values(r.axes, pt.index))
        throw std::runtime_error(fmt::format("point {} has values that do not match its index", pt.index));
      pt.status = p.at("status").get<std::string>();
      pt.error = p.at("error").get<std::string>();
      pt.metrics = p.at("metrics");
      if (pt.status == "ok" && !(pt.metrics.contains("makespan_s") && pt.metrics["makespan_s"].is_number() &&
                                 pt.metrics["makespan_s"].get<double>() >= 0))
        throw std::runtime_error(fmt::format("point {} is ok but has no valid makespan_s", pt.index));
      r.points.push_back(std::move(pt));
    }
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}:1:1: (sweep.json): not a cpsim sweep record: {}", where, e.what()));
  }
  return r;
}

std::string sweep_csv(const SweepRecord& r) {
  std::vector<std::string> columns = fixed_metric_columns();
  std::set<std::string> extra;
  for (const auto& p : r.points)
    for (const auto& [key, value] : p.metrics.items())
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) extra.insert(key);
  columns.insert(columns.end(), extra.begin(), extra.end());

  std::vector<std::string> header = {"index"};
  for (const auto& a : r.axes) header.push_back(csv_field(a.key));
  header.insert(header.end(), {"status", "error"});
  for (const auto& c : columns) header.push_back(csv_field(c));
  std::string out = fmt::format("{}\n", fmt::join(header, ","));
  for (const auto& p : r.points) {
    std::vector<std::string> row = {std::to_string(p.index)};
    for (const auto& v : p.values) row.push_back(csv_field(v));
    row.push_back(csv_field(p.status));
    row.push_back(csv_field(p.error));
    for (const auto& c : columns) row.push_back(p.metrics.contains(c) ? cell(p.metrics[c]) : "");
    out += fmt::format("{}\n", fmt::join(row, ","));
  }
  return out;
}

SweepRecord merge_sweeps(const std::vector<SweepRecord>& parts, const std::vector<std::string>& names) {
  if (parts.empty()) throw InputError("merge:1:1: (args): nothing to merge");
  SweepRecord out = parts[0];
  out.shard.reset();
  out.points.clear();
  const auto same_sweep = [](const SweepRecord& a, const SweepRecord& b) {
    return a.scenario == b.scenario && a.scenario_fnv1a64 == b.scenario_fnv1a64 &&
           a.cpsim_version == b.cpsim_version && a.overrides == b.overrides && a.traces == b.traces &&
           axes_json(a.axes) == axes_json(b.axes);
  };
  std::map<std::size_t, std::pair<const SweepPoint*, std::size_t>> by_index;  // index -> (point, part)
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!same_sweep(parts[i], parts[0]))
      throw InputError(fmt::format("{}:1:1: (sweep.json): not the same sweep as {} (scenario or its "
                                   "content, cpsim version, --set, axes or --traces differ)", names[i], names[0]));
    for (const auto& p : parts[i].points) {
      const auto [it, fresh] = by_index.emplace(p.index, std::make_pair(&p, i));
      if (!fresh)
        throw InputError(fmt::format("{}:1:1: (sweep.json): point {} is also in {}", names[i], p.index,
                                     names[it->second.second]));
    }
  }
  const std::size_t total = point_count(out.axes);
  std::vector<std::size_t> missing;
  for (std::size_t k = 0; k < total; ++k)
    if (!by_index.count(k)) missing.push_back(k);
  if (!missing.empty()) {
    const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
    throw InputError(fmt::format("merge:1:1: (points): {} of {} points missing ({}{}): is a shard missing?",
                                 missing.size(), total,
                                 fmt::join(missing.begin(), missing.begin() + static_cast<long>(shown), ", "),
                                 missing.size() > shown ? ", ..." : ""));
  }
  for (const auto& [index, entry] : by_index) out.points.push_back(*entry.first);
  return out;
}

}  // namespace cpsim
