// cpsim: simulate context-parallel attention on a GPU cluster.
//   cpsim [--version] [-q | -v[v] | --log-level L] COMMAND ...   logs on stderr, results on stdout
//   cpsim run SCENARIO [-o DIR] [--set key.path=value]...   simulate; write summary.json and trace.json
//   cpsim validate SCENARIO [--set ...]                     check a scenario without running it
//   cpsim platform SCENARIO --emit-xml OUT.xml              write the scenario's platform as SimGrid XML
//   cpsim plan SCENARIO                                      print the rank-to-GPU placement and each group's links
//   cpsim plan SCENARIO --search [-o DIR] [-j N] [--objective latency|throughput] [--budget GPUS] [--top N]
//   cpsim sweep SCENARIO [-o DIR] [-j N] [--axis k=v1,v2]... [--zip k=v1,v2]... [--shard I/N] [--traces]
//   cpsim merge DIR... -o OUT                                 join the outputs of sharded sweeps
//   cpsim engine-bench SCENARIO [--flows N] [--bytes B]       platform build time and SimGrid's raw ring rate (JSON)
//   cpsim volumes [--preset seed|mistral-swa] [--json] [--seq-len 1M] ...   CP bytes of every attention mode
#include <CLI/CLI.hpp>
#include <iostream>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/cli/cmd_collective_bench.hpp"
#include "sim/cli/cmd_run.hpp"
#include "sim/cli/cmd_plan.hpp"
#include "sim/cli/cmd_plan_search.hpp"
#include "sim/cli/cmd_sweep.hpp"
#include "sim/cli/cmd_volumes.hpp"
#include "sim/cli/huge_pages.hpp"
#include "sim/report/output_folder.hpp"

namespace cpsim {
const char* build_version();  // generated at build time (cmake/build_version.cmake)
}

int main(int argc, char** argv) {
  cpsim::prefer_huge_pages(argv);    // may re-execute this process once (huge_pages.cpp)
  cpsim::install_signal_cleanup();  // Ctrl-C / SIGTERM: remove staged outputs, exit 130 / 143
  CLI::App app{"cpsim: a discrete-event simulator for context-parallel LLM attention"};
  app.require_subcommand(1);
  app.set_version_flag("--version", cpsim::build_version());
  std::string log_level = "info";
  auto* level_option = app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (logs go to stderr)")
                           ->capture_default_str()
                           ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  bool quiet = false;
  int verbosity = 0;
  auto* quiet_option = app.add_flag("-q,--quiet", quiet, "log warnings and errors only")->excludes(level_option);
  app.add_flag("-v,--verbose", verbosity, "log more: -v debug, -vv trace")->excludes(level_option, quiet_option);

  cpsim::ScenarioArgs scenario;
  std::string output_dir, xml_out;
  auto add_scenario = [&](CLI::App* cmd) {
    cmd->add_option("scenario", scenario.file, "scenario YAML file")->required();
    cmd->add_option("--set", scenario.overrides, "override a key: --set parallel.cp=4 (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option_function<std::uint64_t>(
           "--max-tasks", [&scenario](std::uint64_t n) { scenario.overrides.push_back("run.max_tasks=" + std::to_string(n)); },
           "refuse a workload of more tasks (default 50000000, about 11 GB)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10000000000}));
    cmd->add_flag_callback(
        "--no-fast-path", [&scenario] { scenario.overrides.push_back("run.fast_path=false"); },
        "simulate every GPU even where symmetric ranks could be simulated once (the reference for the fast path)");
  };
  CLI::App* run = app.add_subcommand("run", "simulate a scenario");
  add_scenario(run);
  run->add_option("-o,--output", output_dir, "output folder (default: out/<scenario name>)");
  CLI::App* validate = app.add_subcommand("validate", "check a scenario without running it");
  add_scenario(validate);
  CLI::App* platform = app.add_subcommand("platform", "write the scenario's platform as SimGrid XML");
  add_scenario(platform);
  platform->add_option("--emit-xml", xml_out, "output XML file")->required();
  CLI::App* plan = app.add_subcommand("plan", "print the rank-to-GPU placement and the links each group uses; "
                                              "--search: rank the plans worth running");
  add_scenario(plan);
  cpsim::PlanSearchArgs search;
  bool plan_search = false;
  plan->add_flag("--search", plan_search, "search CP/TP/EP degrees and each kind's CP algorithm, simulate, rank");
  plan->add_option("-o,--output", search.output_dir, "--search: output folder (default: out/<scenario name>-plan)");
  plan->add_option("-j,--jobs", search.jobs, "--search: worker processes (default: one per hardware thread)")
      ->check(CLI::Range(1, 4096));
  plan->add_option("--objective", search.objective, "--search: latency (makespan) or throughput (tokens/s per GPU)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  plan->add_option("--budget", search.budget_gpus, "--search: at most this many GPUs per plan")
      ->check(CLI::Range(1, 65536));
  plan->add_option("--top", search.top, "--search: rows of the ranked table to print (default 10)")
      ->check(CLI::Range(1, 100000));

  cpsim::SweepArgs sweep_args;
  CLI::App* sweep = app.add_subcommand("sweep", "run a scenario over the product of its sweep: block and --axis lists");
  add_scenario(sweep);
  sweep->add_option("-o,--output", sweep_args.output_dir, "output folder (default: out/<scenario name>)");
  sweep->add_option("-j,--jobs", sweep_args.jobs, "worker processes at a time (default: one per hardware thread)")
      ->check(CLI::Range(1, 4096));
  sweep->add_option("--zip", sweep_args.zips,
                    "keys that move together: --zip parallel.cp=1,2,4 --zip platform.nodes=1,1,2 (repeatable)");
  sweep->add_option("--axis", sweep_args.axes, "sweep a key: --axis parallel.cp=1,2,4,8 (repeatable)")
      ->allow_extra_args(false);
  sweep->add_option("--shard", sweep_args.shard, "run only the points with index % N == I: --shard I/N");
  sweep->add_flag("--traces", sweep_args.traces, "keep each point's trace.json");
  std::vector<std::string> merge_dirs;
  CLI::App* merge = app.add_subcommand("merge", "join the outputs of sharded sweeps into one sweep folder");
  merge->add_option("dirs", merge_dirs, "sweep output folders (one per shard)")->required();
  merge->add_option("-o,--output", output_dir, "merged output folder")->required();

  std::size_t bench_flows = 100000;
  double bench_bytes = 1e8;
  CLI::App* engine_bench =
      app.add_subcommand("engine-bench", "time the platform build and a bare SimGrid ring exchange (JSON on stdout)");
  add_scenario(engine_bench);
  engine_bench->add_option("--flows", bench_flows, "flows in the ring exchange")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}));
  engine_bench->add_option("--bytes", bench_bytes, "payload of each flow")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e15));

  cpsim::CollectiveBenchArgs collective_args;
  CLI::App* collective_bench = app.add_subcommand(
      "collective-bench", "time a chain of collectives on the scenario's platform, nccl-tests style (JSON on stdout)");
  add_scenario(collective_bench);
  collective_bench->add_option("--op", collective_args.op, "allgather, allreduce, reduce_scatter or alltoall")
      ->capture_default_str()
      ->check(CLI::IsMember({"allgather", "allreduce", "reduce_scatter", "alltoall"}));
  collective_bench->add_option("--bytes", collective_args.bytes, "nccl-tests' size of each collective")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e15));
  collective_bench->add_option("--count", collective_args.count, "collectives in the chain")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  collective_bench->add_option("--gpus", collective_args.gpus, "the platform's first N GPUs (default: all)")
      ->check(CLI::Range(2, 1 << 20));

  cpsim::VolumesArgs volumes_args;
  CLI::App* volumes = app.add_subcommand("volumes", "print the per-rank CP bytes of every attention mode (no simulation)");
  volumes->add_option("--preset", volumes_args.preset, "seed (the seed's unified parameters) or mistral-swa")
      ->capture_default_str();
  volumes->add_flag("--json", volumes_args.json, "print JSON (bytes as integers)");
  for (const char* name : {"seq-len", "cp", "batch", "dtype-bytes", "kv-width", "gate-width", "d-model", "heads",
                           "head-dim", "n-win", "csa-ratio", "hca-ratio", "csa-top-k", "dsa-top-k", "moba-block",
                           "moba-k"})
    volumes->add_option_function<std::string>(
        std::string("--") + name, [&volumes_args, name](const std::string& v) { volumes_args.values[name] = v; },
        "override the preset's value");

  // A usage mistake is one line and exit 2, like any other input error; --help prints and exits 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version: printed on stdout, exit 0
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "cpsim: usage: " << e.what() << " (cpsim --help)\n";
    return 2;
  }
  if (quiet) log_level = "warn";
  if (verbosity > 0) log_level = verbosity == 1 ? "debug" : "trace";
  // Logs are for people and go to stderr; results (headlines, tables, JSON) go to stdout.
  spdlog::set_default_logger(spdlog::stderr_color_st("cpsim"));
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("%^[%l]%$ %v");

  if (*run) return cpsim::run_command(scenario, output_dir);
  if (*validate) return cpsim::validate_command(scenario);
  if (*plan && plan_search) {
    search.scenario = scenario;
    return cpsim::plan_search_command(search);
  }
  if (*plan) return cpsim::plan_command(scenario);
  if (*sweep) {
    sweep_args.scenario = scenario;
    return cpsim::sweep_command(sweep_args);
  }
  if (*merge) return cpsim::merge_command(merge_dirs, output_dir);
  if (*engine_bench) return cpsim::engine_bench_command(scenario, bench_flows, bench_bytes);
  if (*collective_bench) {
    collective_args.scenario = scenario;
    return cpsim::collective_bench_command(collective_args);
  }
  if (*volumes) return cpsim::volumes_command(volumes_args);
  return cpsim::platform_command(scenario, xml_out);
}
