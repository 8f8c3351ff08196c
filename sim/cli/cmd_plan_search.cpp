#include "sim/cli/cmd_plan_search.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "sim/report/atomic_file.hpp"
#include "sim/cli/cmd_guard.hpp"
#include "sim/report/output_folder.hpp"
#include "sim/plan/plan_space.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_metrics.hpp"
#include "sim/sweep/sweep_progress.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "sim/scenario/units.hpp"
#include "sim/sweep/worker_pool.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/memory.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {
namespace fs = std::filesystem;
namespace {

struct PlanRow {
  PlanCandidate plan;
  std::string status = "invalid";  // invalid (the loader's reason) | unfit (not simulated) | ok | failed
  std::string reason;
  int gpus = 0;
  double tokens = 0;  // per step over every replica: dp x M x B x S (prefill, train), dp x M x B x new tokens (decode)
  MemoryVerdict memory;
  nlohmann::ordered_json metrics;  // sweep_metrics' headline figures of its summary.json
  std::optional<double> makespan_s;
  double score() const { return makespan_s ? *makespan_s : 0; }
};

double throughput_per_gpu(const PlanRow& r) { return r.tokens / *r.makespan_s / r.gpus; }

// Fitting plans first, by the objective; then the others, closest to fitting first (a plan that overflows by less is
// the better starting point); candidates keep their generation order on ties.
bool ranks_before(const PlanRow& a, const PlanRow& b, bool throughput) {
  if (a.memory.fits != b.memory.fits) return a.memory.fits;
  if (!a.memory.fits && a.memory.overflow_bytes != b.memory.overflow_bytes)
    return a.memory.overflow_bytes < b.memory.overflow_bytes;
  if (throughput) return throughput_per_gpu(a) > throughput_per_gpu(b);
  return *a.makespan_s < *b.makespan_s;
}

std::string number(const nlohmann::ordered_json& m, const char* key) {
  return m.contains(key) ? m[key].dump() : "";
}

std::string plans_csv(const std::vector<const PlanRow*>& ranked, const std::vector<PlanRow>& all) {
  std::string csv = "rank,plan,status,reason,gpus,makespan_s,tokens_per_s_per_gpu,fits,memory_peak_bytes,"
                    "memory_overflow_bytes,largest_memory_term,exposed_comm_max_s,cp_bytes_total,tp_bytes_total,"
                    "ep_bytes_total,sets\n";
  auto row = [&](const PlanRow& r, const std::string& rank) {
    std::string sets;
    for (const auto& s : r.plan.sets) sets += (sets.empty() ? "" : " ") + s;
    csv += fmt::format("{},{},{},{},{},{},{},{},{:.0f},{:.0f},{},{},{},{},{},{}\n", rank, csv_field(r.plan.label),
                       r.status, csv_field(r.reason), r.gpus, r.makespan_s ? fmt::format("{}", *r.makespan_s) : "",
                       r.makespan_s ? fmt::format("{}", throughput_per_gpu(r)) : "",
                       r.status == "invalid" ? "" : (r.memory.fits ? "true" : "false"), r.memory.need_bytes,
                       r.memory.overflow_bytes, r.memory.largest_term, number(r.metrics, "exposed_comm_max_s"),
                       number(r.metrics, "cp_bytes_total"), number(r.metrics, "tp_bytes_total"),
                       number(r.metrics, "ep_bytes_total"), csv_field(sets));
  };
  for (std::size_t i = 0; i < ranked.size(); ++i) row(*ranked[i], std::to_string(i + 1));
  for (const auto& r : all)
    if (!r.makespan_s) row(r, "");
  return csv;
}

void print_table(const std::vector<const PlanRow*>& ranked, std::size_t top, Phase phase) {
  const char* figure = phase == Phase::DECODE ? "decode time" : phase == Phase::TRAIN ? "step time" : "TTFT";
  std::cout << fmt::format("{:>4}  {:<60} {:>12} {:>14} {:>11} {:>5} {:>12}\n", "rank", "plan", figure,
                           "tokens/s/GPU", "memory", "fits", "exposed comm");
  for (std::size_t i = 0; i < ranked.size() && i < top; ++i) {
    const PlanRow& r = *ranked[i];
    const double exposed = r.metrics.contains("exposed_comm_max_s") ? r.metrics["exposed_comm_max_s"].get<double>() : 0;
    std::cout << fmt::format("{:>4}  {:<60} {:>12} {:>14.1f} {:>11} {:>5} {:>12}\n", i + 1, r.plan.label,
                             format_time(*r.makespan_s), throughput_per_gpu(r), format_bytes(r.memory.need_bytes),
                             r.memory.fits ? "yes" : "no", format_time(exposed));
  }
}

}  // namespace

int plan_search_command(const PlanSearchArgs& args) {
  return guarded(args.scenario, [&] {
    if (args.objective != "latency" && args.objective != "throughput")
      throw InputError(fmt::format("--objective:1:1: objective: '{}': latency or throughput", args.objective));
    const Scenario base = load_scenario(args.scenario.file, args.scenario.overrides);
    if (base.serve)  // a serving run's plans are its policies: sweep serve.policy over serve.policies
      throw InputError(fmt::format("{}:1:1: run.phase: plan --search ranks the plans of one step; a serving scenario "
                                   "compares policies with `cpsim sweep --axis serve.policy=...` (docs/serving.md)",
                                   args.scenario.file));
    const int jobs = args.jobs > 0 ? args.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

    const bool throughput = args.objective == "throughput";
    const fs::path final_dir = args.output_dir.empty() ? fs::path("out") / (base.name + "-plan") : fs::path(args.output_dir);
    OutputFolder out(final_dir);
    const fs::path dir = out.staging();
    std::vector<PlanRow> rows;
    std::vector<std::optional<Scenario>> loaded;  // per row: the plan's scenario, for the second stage

    // A candidate through the loader and the closed-form memory model (in this process: no engine).
    auto judge = [&](PlanCandidate plan) {
      PlanRow r;
      r.plan = std::move(plan);
      std::vector<std::string> sets = args.scenario.overrides;
      sets.insert(sets.end(), r.plan.sets.begin(), r.plan.sets.end());
      std::optional<Scenario> s;
      try {
        s = load_scenario(args.scenario.file, sets);
        r.gpus = s->parallel.cp * s->parallel.tp * s->parallel.dp * s->parallel.pp;
        r.tokens = double(s->run.batch) * s->run.micro_batches * s->parallel.dp *
                   (s->run.phase == Phase::DECODE ? s->run.new_tokens : double(s->run.seq_len));
        r.memory = memory_verdict(prefill_memory({s->model, s->run, s->parallel, s->cp, s->platform.gpu}),
                                  s->platform.gpu.hbm_bytes);
        r.status = r.memory.fits ? "ok" : "unfit";
      } catch (const InputError& e) {
        r.reason = e.what();
      }
      rows.push_back(std::move(r));
      loaded.push_back(std::move(s));
    };

    // Rows `indices`, simulated in parallel: each is `cpsim run` of the base scenario with the plan's --set.
    auto simulate = [&](const std::vector<std::size_t>& indices, const char* stage) {
      std::vector<std::vector<std::string>> commands;
      for (std::size_t i : indices) {
        std::vector<std::string> argv = {"/proc/self/exe", "--log-level", "error", "run", args.scenario.file, "-o",
                                         (dir / point_dir(i)).string()};
        for (const auto& o : args.scenario.overrides) argv.insert(argv.end(), {"--set", o});
        for (const auto& o : rows[i].plan.sets) argv.insert(argv.end(), {"--set", o});
        argv.insert(argv.end(), {"--set", "outputs.trace=false"});
        commands.push_back(std::move(argv));
      }
      std::cerr << fmt::format("plan: {}: simulating {} ({} at a time)\n", stage, indices.size(), jobs);
      SweepProgress progress(std::cerr, indices.size(), ::isatty(STDERR_FILENO) == 1, "plan");
      run_workers(
          commands, jobs,
          [&](std::size_t job, const WorkerOutcome& w) {
            PlanRow& r = rows[indices[job]];
            SweepPoint p;
            if (!record_failure(p, w)) {
              std::ifstream in(dir / point_dir(indices[job]) / "summary.json");
              const auto summary = nlohmann::json::parse(in);
              r.metrics = point_metrics(summary);
              if (r.metrics.contains("makespan_s")) r.makespan_s = r.metrics["makespan_s"].get<double>();
              // The simulated verdict (the memory timeline's peak) replaces the closed-form one.
              if (const auto m = summary.find("memory"); m != summary.end() && m->contains("peak_bytes")) {
                r.memory.need_bytes = (*m)["peak_bytes"].get<double>();
                r.memory.fits = (*m)["fits"].get<bool>();
                r.memory.overflow_bytes = (*m)["overflow_bytes"].get<double>();
              }
            }
            if (!r.makespan_s) r.status = "failed", r.reason = p.error;
            progress.point_done(fmt::format("{} {}", r.plan.label, r.status), !r.makespan_s);
          },
          [&] { progress.tick(); });
      progress.finish();
    };

    auto rank = [&] {
      std::vector<const PlanRow*> ranked;
      for (const auto& r : rows)
        if (r.makespan_s) ranked.push_back(&r);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [&](const PlanRow* a, const PlanRow* b) { return ranks_before(*a, *b, throughput); });
      return ranked;
    };

    // 1. Degrees and algorithms: judged, then the valid ones that fit simulated (all valid ones if none fits).
    for (auto& plan : plan_candidates(base, args.budget_gpus)) judge(std::move(plan));
    const bool any_fits = std::any_of(rows.begin(), rows.end(), [](const PlanRow& r) { return r.status == "ok"; });
    std::vector<std::size_t> first;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].status == "ok" || (!any_fits && rows[i].status == "unfit")) first.push_back(i);
    if (first.empty())
      throw InputError(fmt::format("{}:1:1: parallel: none of the {} candidate plans is valid (first: {})",
                                   args.scenario.file, rows.size(), rows.empty() ? "none" : rows.front().reason));
    std::size_t invalid = 0, unfit = 0;
    for (const auto& r : rows) invalid += r.status == "invalid", unfit += r.status == "unfit";
    std::cerr << fmt::format("plan: {} candidates, {} refused by the loader, {}\n", rows.size(), invalid,
                             any_fits ? fmt::format("{} do not fit", unfit)
                                      : "none fits in closed form: every valid one is simulated");
    simulate(first, "degrees and algorithms");

    // 2. Local search: the three best plans, each with one choice changed; then the three best again, until the
    // leaders have all been refined (at most kRefinementRounds rounds). A plan already judged is not judged again.
    std::set<std::string> seen;
    auto key_of = [](const PlanCandidate& p) {
      std::vector<std::string> sets = p.sets;
      std::sort(sets.begin(), sets.end());
      return fmt::format("{}", fmt::join(sets, " "));
    };
    for (const auto& r : rows) seen.insert(key_of(r.plan));
    std::vector<bool> refined(rows.size(), false);
    constexpr int kRefinementRounds = 4;
    for (int round = 1; round <= kRefinementRounds; ++round) {
      const std::size_t before = rows.size();
      std::vector<std::size_t> leaders;  // indices: judging appends to `rows`
      for (const PlanRow* r : rank()) leaders.push_back(std::size_t(r - rows.data()));
      if (leaders.size() > 3) leaders.resize(3);
      for (std::size_t i : leaders) {
        if (refined[i] || !loaded[i]) continue;
        refined[i] = true;
        for (auto& variant : plan_refinements(*loaded[i], rows[i].plan, throughput))
          if (seen.insert(key_of(variant)).second) judge(std::move(variant));
      }
      refined.resize(rows.size(), false);
      std::vector<std::size_t> next;
      for (std::size_t i = before; i < rows.size(); ++i)
        if (rows[i].status == "ok" || (!any_fits && rows[i].status == "unfit")) next.push_back(i);
      if (next.empty()) break;
      simulate(next, fmt::format("refinements, round {}", round).c_str());
    }

    // 3. Ranked: fitting plans first, then the objective.
    const auto ranked = rank();
    if (ranked.empty()) throw std::runtime_error("no candidate plan could be simulated");
    AtomicFile csv((dir / "plans.csv").string());
    csv.stream() << plans_csv(ranked, rows);
    std::vector<std::string> winner_sets = args.scenario.overrides;
    winner_sets.insert(winner_sets.end(), ranked.front()->plan.sets.begin(), ranked.front()->plan.sets.end());
    YAML::Node winner = scenario_document(args.scenario.file, winner_sets);
    winner["name"] = base.name + "-winner";
    YAML::Emitter yaml;
    yaml << winner;
    AtomicFile winner_file((dir / "winner.yaml").string());
    winner_file.stream() << "# cpsim plan --search: the best plan for " << args.scenario.file << " ("
                         << args.objective << "): " << ranked.front()->plan.label << "\n"
                         << yaml.c_str() << "\n";
    csv.commit();
    winner_file.commit();
    out.commit();
    print_table(ranked, static_cast<std::size_t>(std::max(1, args.top)), base.run.phase);
    std::cerr << fmt::format("plan: best {} ({}); wrote {}/plans.csv and winner.yaml\n", ranked.front()->plan.label,
                             format_time(*ranked.front()->makespan_s), final_dir.string());
    return 0;
  }, "cpsim plan: ");
}

}  // namespace cpsim
