#include "sim/cli/cmd_serve.hpp"

#include <iostream>
#include <map>
#include <spdlog/spdlog.h>
#include <thread>

#include "sim/engine/child_simulation.hpp"
#include "sim/report/atomic_file.hpp"
#include "sim/report/output_folder.hpp"
#include "sim/report/summary_writer.hpp"
#include "sim/serve/instance_model.hpp"
#include "sim/serve/serve_policy.hpp"
#include "sim/serve/serve_report.hpp"
#include "sim/serve/step_cost_cache.hpp"

namespace cpsim {
namespace {

// Each request's class, prefill algorithm and KV per GPU (memoised by CP degree and length).
std::vector<RequestPlan> plan_requests(const Scenario& s, const std::vector<Request>& requests) {
  const ServeSpec& spec = *s.serve;
  const auto routing = make_routing(spec);
  std::map<std::pair<int, std::uint64_t>, double> kv;
  std::vector<RequestPlan> plans;
  for (const Request& r : requests) {
    RequestPlan p;
    p.cls = routing->instance_class(r);
    const int cp = spec.classes[p.cls].cp;
    p.pass_q = prefill_passes_q(spec, r, cp);
    const std::uint64_t tokens = r.prompt_tokens + r.output_tokens;
    auto it = kv.find({cp, tokens});
    if (it == kv.end()) it = kv.emplace(std::pair{cp, tokens}, sequence_kv_bytes(s, cp, tokens)).first;
    p.kv_bytes = it->second;
    plans.push_back(p);
  }
  return plans;
}

// Per instance, what is left for KV beside the largest prefill step it will run.
void set_kv_budgets(const Scenario& s, const std::vector<Request>& requests, const std::vector<RequestPlan>& plans,
                    std::vector<ServeInstance>& instances) {
  const ServeSpec& spec = *s.serve;
  std::vector<std::uint64_t> largest(spec.classes.size(), 1);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    std::uint64_t step = requests[i].prompt_tokens - requests[i].cached_tokens;
    if (spec.chunk_tokens > 0) step = std::min(step, spec.chunk_tokens);
    largest[plans[i].cls] = std::max(largest[plans[i].cls], step);
  }
  std::map<int, double> budget;  // by class
  for (ServeInstance& in : instances) {
    if (!budget.count(in.cls)) budget[in.cls] = kv_budget_bytes(s, in.cp, largest[in.cls]);
    in.kv_budget_bytes = budget[in.cls];
  }
}

}  // namespace

int serve_run(const Scenario& s, const std::string& output_dir) {
  const ServeSpec& spec = *s.serve;
  const std::vector<Request> requests = make_requests(spec.source);
  const std::vector<RequestPlan> plans = plan_requests(s, requests);
  std::vector<ServeInstance> instances = place_instances(spec);
  set_kv_budgets(s, requests, plans, instances);

  StepCostTable costs;
  register_step_demands(costs, spec, requests, plans);
  const std::string cache_file = step_cost_cache_file(s, spec.cost_cache_dir);
  const int cached = load_step_costs(cache_file, costs);
  const std::vector<StepShape> missing = costs.missing();
  if (!missing.empty()) {
    spdlog::info("step costs: simulating {} shapes ({} read from the cache)", missing.size(), cached);
    std::vector<Scenario> steps;
    for (const StepShape& shape : missing) steps.push_back(step_scenario(s, shape));
    const int jobs = int(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    const std::vector<double> t_s = simulate_makespans_in_children(steps, jobs, "a serving step");
    for (std::size_t i = 0; i < missing.size(); ++i) costs.set(missing[i], t_s[i]);
    save_step_costs(cache_file, costs);
  }
  // Only the shapes this run needs are reported (the cache may hold others).
  StepCostTable used;
  register_step_demands(used, spec, requests, plans);
  for (const StepShape& shape : used.missing()) used.set(shape, costs.costs().at(shape));

  const ServeRun run = simulate_serving(spec, instances, requests, plans, used);
  spdlog::info("step costs: {} shapes, {} simulated now, the others from {}", used.costs().size(), missing.size(),
               cache_file.empty() ? "nowhere (serve.cost_cache: none)" : cache_file);
  const ServeInputs in{s, instances, requests, plans, used, run};

  const std::string dir = output_dir.empty() ? "out/" + s.name : output_dir;
  OutputFolder out(dir);
  const std::string staged = out.staging().string();
  nlohmann::ordered_json summary;
  summary["cpsim_summary_version"] = 1;
  summary["name"] = s.name;
  summary["phase"] = "serve";
  summary["makespan_s"] = run.end_s;
  summary["serve"] = serve_summary_json(in);
  nlohmann::ordered_json scenario = resolved_scenario_json(s);
  scenario["run"]["phase"] = "serve";
  scenario["parallel"]["cp"] = nullptr;  // per instance class: serve.policy
  for (const char* key : {"seq_len", "new_tokens", "micro_batches", "cached_tokens", "batch"})
    scenario["run"][key] = nullptr;  // per request and per step: serve.source, step_costs.csv
  scenario["serve"] = serve_spec_json(spec);
  summary["scenario"] = scenario;
  {
    AtomicFile f(staged + "/summary.json");
    f.stream() << summary.dump(2) << "\n";
    f.commit();
  }
  {
    AtomicFile f(staged + "/requests.csv");
    write_requests_csv(f.stream(), in);
    f.commit();
  }
  {
    AtomicFile f(staged + "/step_costs.csv");
    write_step_costs_csv(f.stream(), used);
    f.commit();
  }
  if (s.write_trace) {
    AtomicFile f(staged + (s.gzip_trace ? "/trace.json.gz" : "/trace.json"),
                 s.gzip_trace ? AtomicFile::Compression::GZIP : AtomicFile::Compression::NONE);
    write_serve_trace(f.stream(), in);
    f.commit();
  }
  out.commit();
  for (const std::string& line : serve_headline(in, summary["serve"])) std::cout << line << '\n';
  std::cout.flush();
  spdlog::info("wrote {}/summary.json, requests.csv, step_costs.csv{}", dir, s.write_trace ? " and the trace" : "");
  return 0;
}

}  // namespace cpsim
