#include "sim/cli/cmd_run.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "platforms/xml_writer.hpp"
#include "sim/report/atomic_file.hpp"
#include "sim/cli/cmd_guard.hpp"
#include "sim/report/output_folder.hpp"
#include "sim/engine/executor.hpp"
#include "sim/engine/executor_raw_ring.hpp"
#include "sim/engine/symmetry_choice.hpp"
#include "sim/cli/cmd_run_auto.hpp"
#include "sim/cli/cmd_serve.hpp"
#include "sim/serve/serve_simulation.hpp"
#include "sim/report/headline.hpp"
#include "sim/report/metrics.hpp"
#include "sim/engine/run_progress.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/report/summary_writer.hpp"
#include "sim/report/trace_writer.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/decode.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {
namespace {

// The headline is a result: stdout, whatever the log level (logs, warnings included, go to stderr).
void print_headline(const Scenario& s, const Metrics& m) {
  for (const std::string& line : headline_lines(s, m)) std::cout << line << '\n';
  std::cout.flush();
  if (!m.memory.fits)
    spdlog::warn("  does not fit: GPU {} {} (run.on_oom: error refuses such plans)", m.memory_peak_gpu,
                 describe_overflow(m.memory));
}

// What `run` would refuse before simulating, for `validate`: the workload's size (run.max_tasks) and the platform as
// the engine loads it, with a route for every pair of GPUs the workload sends between (both candidates of `auto`).
void check_runnable(const Scenario& scenario) {
  std::vector<CpAlgorithm> algorithms{scenario.cp.dense.algorithm};
  if (algorithms.front() == CpAlgorithm::AUTO) algorithms = kAutoCandidates;
  for (CpAlgorithm algorithm : algorithms) {
    Scenario s = scenario;
    s.cp.dense.algorithm = algorithm;
    const auto symmetry = collapse_symmetry(s);
    const WorkloadInputs inputs{s.model, s.run, s.parallel, s.cp, s.platform.gpu, &s.platform,
                                symmetry ? &*symmetry : nullptr};
    check_executable(generate_workload(inputs, s.platform.gpu_count()), s.platform);
  }
}

}  // namespace

int run_command(const ScenarioArgs& args, const std::string& output_dir) {
  return guarded(args, [&] {
    Scenario scenario = load_scenario(args.file, args.overrides);
    if (scenario.serve) return serve_run(scenario, output_dir);
    const std::string dir = output_dir.empty() ? "out/" + scenario.name : output_dir;
    std::optional<AutoChoice> auto_choice;
    if (scenario.cp.dense.algorithm == CpAlgorithm::AUTO) auto_choice = resolve_auto_algorithm(scenario);

    std::string no_symmetry;
    const auto symmetry = collapse_symmetry(scenario, &no_symmetry);
    const WorkloadInputs inputs{scenario.model,       scenario.run,        scenario.parallel,
                                scenario.cp,          scenario.platform.gpu, &scenario.platform,
                                symmetry ? &*symmetry : nullptr};
    const WallClock building;
    const TaskGraph graph = generate_workload(inputs, scenario.platform.gpu_count());
    spdlog::info("workload: {} tasks, {} flows on {} GPUs (built in {:.3f} s)", graph.task_count() * graph.copies_per_task(),
                 graph.flow_count() * graph.copies_per_task(), RankLayout(scenario.parallel).simulated_gpus(),
                 building.elapsed_s());
    const ExecutionResult result = [&] {
      RunProgress progress(std::cerr, progress_wanted());  // a line on a terminal while a long run simulates
      return execute(graph, scenario.platform, scenario.contention,
                     [&progress](std::size_t done, std::size_t total, double t_s) { progress.update(done, total, t_s); },
                     scenario.run.closed_form_flows);
    }();
    spdlog::info("simulated {} in {:.3f} s of wall time", format_time(result.makespan_s), result.wall_s);
    const WallClock measuring;
    const Metrics metrics = compute_metrics(scenario, graph, result);
    spdlog::debug("metrics computed in {:.3f} s", measuring.elapsed_s());
    // The closed form fitted at load; the simulated peak (layers overlapping on a GPU) may still overflow.
    if (scenario.run.oom_is_error && !metrics.memory.fits)
      throw InputError(fmt::format("{}: GPU {}'s simulated peak {}: it does not fit", scenario.on_oom_location,
                                   metrics.memory_peak_gpu, describe_overflow(metrics.memory)));

    OutputFolder out(dir);  // written whole into a staging sibling, swapped in by commit()
    const std::string staged = out.staging().string();
    std::optional<AtomicFile> trace_file;
    TraceStats trace;
    const std::string trace_name = scenario.gzip_trace ? "trace.json.gz" : "trace.json";
    if (scenario.write_trace) {
      trace_file.emplace(staged + "/" + trace_name,
                         scenario.gzip_trace ? AtomicFile::Compression::GZIP : AtomicFile::Compression::NONE);
      trace = write_trace(trace_file->stream(), scenario, graph, result, &metrics.memory_timelines);
    }
    AtomicFile summary(staged + "/summary.json");
    auto summary_doc = summary_json(scenario, metrics, scenario.write_trace ? &trace : nullptr);
    if (auto_choice) summary_doc["cp_auto"] = auto_choice_json(*auto_choice);
    summary.stream() << summary_doc.dump(2) << "\n";
    AtomicFile engine_file(staged + "/engine.json");
    engine_file.stream() << engine_json(graph, no_symmetry).dump(2) << "\n";
    if (trace_file) trace_file->commit();
    summary.commit();
    engine_file.commit();
    out.commit();
    print_headline(scenario, metrics);
    spdlog::info("wrote {}/summary.json{}", dir, scenario.write_trace ? " and " + trace_name : "");
    return 0;
  });
}

int validate_command(const ScenarioArgs& args) {
  return guarded(args, [&] {
    const Scenario s = load_scenario(args.file, args.overrides);
    if (s.serve) {
      std::cout << fmt::format("{}: ok (serve: {} instances of tp {} on {} x {} GPUs, {} layers of {})\n", args.file,
                               place_instances(*s.serve).size(), s.parallel.tp, s.platform.nodes,
                               s.platform.gpus_per_node, s.model.layers, s.model.name);
      return 0;
    }
    check_runnable(s);
    std::cout << fmt::format("{}: ok ({} x {} GPUs, {} layers of {}, S = {}, cp = {}, tp = {})\n", args.file,
                             s.platform.nodes, s.platform.gpus_per_node, s.model.layers, s.model.name, s.run.seq_len,
                             s.parallel.cp, s.parallel.tp);
    return 0;
  });
}

int platform_command(const ScenarioArgs& args, const std::string& xml_out) {
  return guarded(args, [&] {
    const Scenario s = load_scenario(args.file, args.overrides);
    if (!s.platform.xml_file.empty())
      throw InputError(fmt::format("{}:1:1: platform.file: the platform is already an XML file ({})", args.file,
                                   s.platform.xml_file));
    write_file_atomically(xml_out, platform_xml(s.platform));
    spdlog::info("wrote {} ({} GPUs)", xml_out, s.platform.gpu_count());
    return 0;
  });
}

int engine_bench_command(const ScenarioArgs& args, std::size_t flows, double bytes) {
  return guarded(args, [&] {
    const Scenario s = load_scenario(args.file, args.overrides);
    const EngineBenchResult r = run_engine_bench(s.platform, flows, bytes);
    const nlohmann::ordered_json out = {{"gpus", r.gpus},
                                        {"platform_build_s", r.platform_build_s},
                                        {"ring_flows", r.ring_flows},
                                        {"ring_bytes_per_flow", bytes},
                                        {"ring_wall_s", r.ring_wall_s},
                                        {"ring_flows_per_s", r.ring_flows / r.ring_wall_s},
                                        {"ring_simulated_s", r.ring_simulated_s}};
    std::cout << out.dump(2) << "\n";
    return 0;
  });
}

}  // namespace cpsim
