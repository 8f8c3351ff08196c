#include "sim/cli/cmd_sweep.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "sim/report/atomic_file.hpp"
#include "sim/scenario/input_files.hpp"
#include "sim/report/output_folder.hpp"
#include "sim/sweep/sweep_metrics.hpp"
#include "sim/sweep/sweep_progress.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_comparison.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "sim/sweep/worker_pool.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace fs = std::filesystem;
namespace {

template <class F>
int guarded(const char* command, F&& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // file system trouble: the outputs were not (all) written
    std::cerr << "cpsim " << command << ": " << e.what() << "\n";
    return 1;
  }
}

// The scenario's name and sweep axes. Only the file's syntax and its sweep block are checked here: everything else
// may depend on the swept values and is checked by each point's worker.
std::pair<std::string, std::vector<SweepAxis>> read_sweep_scenario(const std::string& file) {
  const YAML::Node root = load_yaml_file(file);
  const YamlSource source{file, {}};
  if (!root.IsMap()) fail_at(root, source, "", "a scenario must be a mapping");
  MapReader top(root, source, "");
  const std::string name = top.has("name") ? read_scenario_name(top) : fs::path(file).stem().string();
  return {name, read_sweep_block(top)};
}

// An axis naming a key the scenario does not have would fail every point: report it once, at the axis, before
// anything runs. Other errors (a value impossible for some point) stay per point.
void check_axis_keys(const SweepRecord& r) {
  std::vector<std::string> overrides = r.overrides;
  for (const auto& a : r.axes) overrides.push_back(a.key + "=" + a.values.front());
  try {
    (void)load_scenario(r.scenario, overrides);
  } catch (const InputError& e) {
    for (const auto& a : r.axes)
      if (e.reason == InputErrorReason::kUnknownKey && e.key_path == a.key)
        throw InputError(fmt::format("{}: sweep.{}: the scenario has no such key (every point would fail)",
                                     a.location, a.key));
  }
}

std::string describe(const SweepRecord& r, const SweepPoint& p) {
  std::string s = fmt::format("point {} {}", p.index, p.status);
  for (std::size_t a = 0; a < r.axes.size(); ++a) s += fmt::format(" {}={}", r.axes[a].key, p.values[a]);
  if (!p.error.empty()) s += ": " + p.error;
  return s;
}

// A finished worker -> its row. A worker that exits 0 must have left a readable summary.json.
void record_outcome(SweepPoint& p, const WorkerOutcome& w, const fs::path& dir) {
  if (record_failure(p, w)) return;
  const fs::path summary = dir / point_dir(p.index) / "summary.json";
  try {
    std::ifstream in(summary);
    if (!in) throw std::runtime_error("missing");
    p.metrics = point_metrics(nlohmann::json::parse(in));
    p.status = "ok";
  } catch (const std::exception& e) {
    p.status = "failed";
    p.error = fmt::format("cannot read {}: {}", summary.string(), e.what());
  }
}

void write_outputs(const SweepRecord& r, const fs::path& dir) {
  AtomicFile csv((dir / "sweep.csv").string());
  csv.stream() << sweep_csv(r);
  AtomicFile json((dir / "sweep.json").string());
  json.stream() << sweep_json(r).dump(2) << "\n";
  std::optional<AtomicFile> comparison, ranking;
  if (const auto axis = comparison_axis(r); axis && !r.shard) {
    comparison.emplace((dir / "comparison.csv").string());
    comparison->stream() << comparison_csv(r, *axis);
    ranking.emplace((dir / "ranking.csv").string());
    ranking->stream() << ranking_csv(r, *axis);
  }
  csv.commit();
  json.commit();
  if (comparison) comparison->commit();
  if (ranking) ranking->commit();
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  return guarded("sweep", [&] {
    const Shard shard = parse_shard(args.shard);
    if (args.jobs < 0) throw InputError(fmt::format("-j:1:1: jobs: must be at least 1, got {}", args.jobs));
    const int jobs = args.jobs > 0 ? args.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<SweepAxis> cli;
    for (const auto& a : args.axes) cli.push_back(parse_axis_arg(a));
    for (const auto& z : args.zips) cli.push_back(parse_axis_arg(z, true));
    auto [name, block] = read_sweep_scenario(args.scenario.file);

    SweepRecord record;
    record.scenario = args.scenario.file;
    record.scenario_fnv1a64 = file_fnv1a64(args.scenario.file);
    record.overrides = args.scenario.overrides;
    record.axes = combine_axes(std::move(block), cli);
    record.traces = args.traces;
    if (shard.count > 1) record.shard = shard;
    check_overrides_against_axes(record.overrides, record.axes);
    check_axis_keys(record);

    const fs::path final_dir = args.output_dir.empty() ? fs::path("out") / name : fs::path(args.output_dir);
    OutputFolder out(final_dir);  // the whole sweep is staged, points included, and swapped in at the end
    const fs::path dir = out.staging();
    const std::size_t total = point_count(record.axes);
    std::vector<std::vector<std::string>> commands;
    for (std::size_t i = 0; i < total; ++i) {
      if (!shard.contains(i)) continue;
      SweepPoint p;
      p.index = i;
      p.values = point_values(record.axes, i);
      // The point's folder is created by its worker, when it runs (the staging folder starts empty).
      const fs::path pdir = dir / point_dir(i);
      // The worker is this very binary: `cpsim run` with the point's values as the last --set (they win).
      std::vector<std::string> argv = {"/proc/self/exe", "--log-level", "error", "run", record.scenario,
                                       "-o", pdir.string()};
      for (const auto& o : record.overrides) argv.insert(argv.end(), {"--set", o});
      for (std::size_t a = 0; a < record.axes.size(); ++a)
        argv.insert(argv.end(), {"--set", record.axes[a].key + "=" + p.values[a]});
      if (!record.traces) argv.insert(argv.end(), {"--set", "outputs.trace=false"});
      commands.push_back(std::move(argv));
      record.points.push_back(std::move(p));
    }

    std::cerr << fmt::format("sweep: {} points{} over {} axes, {} at a time -> {}\n", record.points.size(),
                             record.shard ? fmt::format(" (shard {}/{} of {})", shard.index, shard.count, total) : "",
                             record.axes.size(), jobs, final_dir.string());
    SweepProgress progress(std::cerr, record.points.size(), ::isatty(STDERR_FILENO) == 1);
    run_workers(
        commands, jobs,
        [&](std::size_t job, const WorkerOutcome& w) {
          SweepPoint& p = record.points[job];
          record_outcome(p, w, dir);
          progress.point_done(describe(record, p), p.status != "ok");
        },
        [&] { progress.tick(); });
    progress.finish();

    write_outputs(record, dir);
    out.commit();
    std::size_t failed = 0;
    for (const auto& p : record.points) failed += p.status != "ok";
    std::cerr << fmt::format("sweep: {} of {} points ok{}; wrote {}/sweep.csv and sweep.json\n",
                             record.points.size() - failed, record.points.size(),
                             failed ? fmt::format(", {} failed", failed) : "", final_dir.string());
    return failed ? 1 : 0;
  });
}

int merge_command(const std::vector<std::string>& dirs, const std::string& output_dir) {
  return guarded("merge", [&] {
    std::vector<SweepRecord> parts;
    std::vector<std::string> names;
    for (const auto& d : dirs) {
      const std::string file = (fs::path(d) / "sweep.json").string();
      std::ifstream in(file);
      if (!in) throw InputError(fmt::format("{}:1:1: (file): cannot open file", file));
      nlohmann::ordered_json j;
      try {
        j = nlohmann::ordered_json::parse(in);
      } catch (const nlohmann::json::parse_error& e) {
        throw InputError(fmt::format("{}:1:1: (syntax): {}", file, e.what()));
      }
      parts.push_back(sweep_from_json(j, file));
      names.push_back(file);
    }
    const SweepRecord merged = merge_sweeps(parts, names);

    // Gather every point's folder so that OUT reads like the folder of one unsharded run (OUT may be one of the
    // shards: its points are copied into the staging folder before the swap).
    OutputFolder out_folder{fs::path(output_dir)};
    const fs::path out = out_folder.staging();
    for (std::size_t i = 0; i < parts.size(); ++i)
      for (const auto& p : parts[i].points) {
        const fs::path from = fs::path(dirs[i]) / point_dir(p.index), to = out / point_dir(p.index);
        if (p.status == "ok" && !fs::is_regular_file(from / "summary.json"))
          throw InputError(fmt::format("{}:1:1: (points): point {} is ok but {} is missing", names[i], p.index,
                                       (from / "summary.json").string()));
        if (!fs::exists(from)) continue;
        fs::create_directories(to.parent_path());
        fs::copy(from, to, fs::copy_options::recursive);
      }
    write_outputs(merged, out);
    out_folder.commit();
    std::size_t failed = 0;
    for (const auto& p : merged.points) failed += p.status != "ok";
    std::cerr << fmt::format("merge: {} points from {} folders ({} failed); wrote {}/sweep.csv and sweep.json\n",
                             merged.points.size(), dirs.size(), failed, output_dir);
    return failed ? 1 : 0;  // as the unsharded sweep would
  });
}

}  // namespace cpsim
