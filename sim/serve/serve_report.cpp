#include "sim/serve/serve_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "sim/report/json_text.hpp"
#include "sim/report/summary_writer.hpp"
#include "sim/scenario/units.hpp"

namespace cpsim {
namespace {

using json = nlohmann::ordered_json;

const char* status_name(RequestStatus s) {
  return s == RequestStatus::DONE ? "done" : s == RequestStatus::REFUSED ? "refused" : "unfinished";
}

std::string gpu_range(const ServeInstance& in) {
  return in.gpus() == 1 ? std::to_string(in.first_gpu) : fmt::format("{}-{}", in.first_gpu, in.first_gpu + in.gpus() - 1);
}

// A time in a CSV cell: shortest exact form; empty when the event did not happen.
std::string cell(double t_s) { return t_s < 0 ? "" : fmt::format("{}", t_s); }

double ttft_of(const Request& r, const RequestOutcome& o) { return o.first_token_s - r.arrival_s; }
// Time per output token after the first: (finish - first token) / (output - 1); undefined for one output token.
double tpot_of(const Request& r, const RequestOutcome& o) {
  return r.output_tokens < 2 ? -1 : (o.finish_s - o.first_token_s) / double(r.output_tokens - 1);
}

json stats(std::vector<double> v) {
  if (v.empty()) return nullptr;
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / double(v.size());
  return {{"p50", percentile(v, 50)}, {"p90", percentile(v, 90)}, {"p99", percentile(v, 99)},
          {"mean", mean},             {"max", v.back()},           {"count", v.size()}};
}

std::string us(double t_s) {
  const std::int64_t ns = std::llround(t_s * 1e9);
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

}  // namespace

double percentile(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  const std::size_t rank = std::size_t(std::ceil(p / 100.0 * double(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

void write_requests_csv(std::ostream& out, const ServeInputs& in) {
  out << "id,arrival_s,prompt_tokens,cached_tokens,output_tokens,status,instance,cp,tp,gpus,prefill_algorithm,"
         "start_s,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,reason\n";
  for (std::size_t i = 0; i < in.requests.size(); ++i) {
    const Request& r = in.requests[i];
    const RequestOutcome& o = in.run.outcomes[i];
    const ServeInstance* inst = o.instance >= 0 ? &in.instances[o.instance] : nullptr;
    const bool first = o.first_token_s >= 0, done = o.status == RequestStatus::DONE;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id, r.arrival_s, r.prompt_tokens,
                       r.cached_tokens, r.output_tokens, status_name(o.status),
                       inst ? std::to_string(o.instance) : "", inst ? std::to_string(inst->cp) : "",
                       inst ? std::to_string(inst->tp) : "", inst ? gpu_range(*inst) : "",
                       in.plans[i].pass_q ? "pass-q" : "pass-kv", cell(o.start_s), cell(o.first_token_s),
                       cell(o.finish_s), first ? cell(ttft_of(r, o)) : "",
                       done && r.output_tokens > 1 ? cell(tpot_of(r, o)) : "",
                       done ? cell(o.finish_s - r.arrival_s) : "",
                       o.reason.empty() ? "" : "\"" + o.reason + "\"");
  }
}

void write_step_costs_csv(std::ostream& out, const StepCostTable& costs) {
  out << "kind,cp,algorithm,new_tokens,cached_tokens,batch,context,t_s\n";
  for (const auto& [s, t_s] : costs.costs()) {
    const bool prefill = s.kind == StepShape::Kind::PREFILL;
    out << fmt::format("{},{},{},{},{},{},{},{}\n", prefill ? "prefill" : "decode", s.cp,
                       prefill ? (s.pass_q ? "pass-q" : "pass-kv") : (s.pass_q ? "pass-q" : "tree"),
                       prefill ? std::to_string(s.tokens) : "", prefill ? std::to_string(s.cached) : "",
                       prefill ? "" : std::to_string(s.batch), prefill ? "" : std::to_string(s.tokens), t_s);
  }
}

json serve_summary_json(const ServeInputs& in) {
  const ServeSpec& spec = *in.scenario.serve;
  const ServeRun& run = in.run;
  std::vector<double> ttft, tpot, e2e, queue;
  int done = 0, refused = 0, good = 0;
  double output_tokens = 0, prompt_tokens = 0;
  for (std::size_t i = 0; i < in.requests.size(); ++i) {
    const Request& r = in.requests[i];
    const RequestOutcome& o = run.outcomes[i];
    if (o.status == RequestStatus::REFUSED) ++refused;
    if (o.start_s >= 0) queue.push_back(o.start_s - r.arrival_s);
    if (o.first_token_s >= 0) ttft.push_back(ttft_of(r, o));
    if (o.status != RequestStatus::DONE) continue;
    ++done;
    output_tokens += double(r.output_tokens);
    prompt_tokens += double(r.prompt_tokens - r.cached_tokens);
    e2e.push_back(o.finish_s - r.arrival_s);
    const double t = tpot_of(r, o);
    if (t >= 0) tpot.push_back(t);
    const bool ttft_ok = spec.slo_ttft_s <= 0 || ttft_of(r, o) <= spec.slo_ttft_s;
    const bool tpot_ok = spec.slo_tpot_s <= 0 || t <= spec.slo_tpot_s;  // one output token: no TPOT to miss
    if (ttft_ok && tpot_ok) ++good;
  }
  const double span_s = run.end_s > 0 ? run.end_s : 1;
  int total_gpus = 0;
  double busy_gpu_s = 0;
  json instances = json::array();
  std::vector<int> served(in.instances.size(), 0), prefills(in.instances.size(), 0), decodes(in.instances.size(), 0);
  for (const RequestOutcome& o : run.outcomes)
    if (o.instance >= 0 && o.status != RequestStatus::REFUSED) ++served[o.instance];
  for (const StepRecord& s : run.steps) {
    if (s.prefill_request >= 0) ++prefills[s.instance];
    if (s.decode_batch > 0) ++decodes[s.instance];
  }
  for (std::size_t i = 0; i < in.instances.size(); ++i) {
    const ServeInstance& inst = in.instances[i];
    total_gpus += inst.gpus();
    busy_gpu_s += run.busy_s[i] * inst.gpus();
    instances.push_back({{"index", i},
                         {"cp", inst.cp},
                         {"tp", inst.tp},
                         {"gpus", gpu_range(inst)},
                         {"kv_budget_bytes_per_gpu", std::llround(inst.kv_budget_bytes)},
                         {"requests", served[i]},
                         {"busy_s", run.busy_s[i]},
                         {"utilisation", run.busy_s[i] / span_s},
                         {"prefill_iterations", prefills[i]},
                         {"decode_iterations", decodes[i]}});
  }
  // Queue length over time: the largest number of waiting requests in each of (at most) 200 equal windows.
  constexpr int kWindows = 200;
  json t_axis = json::array(), waiting = json::array();
  int max_waiting = 0;
  std::size_t at = 0;
  int current = 0;
  for (int w = 0; w < kWindows && !run.waiting.empty(); ++w) {
    const double from = span_s * w / kWindows, to = span_s * (w + 1) / kWindows;
    int peak = current;
    while (at < run.waiting.size() && run.waiting[at].first < to) peak = std::max(peak, current = run.waiting[at++].second);
    max_waiting = std::max(max_waiting, peak);
    t_axis.push_back(from);
    waiting.push_back(peak);
  }
  json slo = {{"ttft_s", spec.slo_ttft_s > 0 ? json(spec.slo_ttft_s) : json(nullptr)},
              {"tpot_s", spec.slo_tpot_s > 0 ? json(spec.slo_tpot_s) : json(nullptr)}};
  const int total = int(in.requests.size());
  return {{"requests", {{"total", total}, {"done", done}, {"refused", refused}, {"unfinished", total - done - refused}}},
          {"ttft_s", stats(ttft)},
          {"tpot_s", stats(tpot)},
          {"e2e_s", stats(e2e)},
          {"queue_s", stats(queue)},
          {"throughput",
           {{"requests_per_s", done / span_s},
            {"output_tokens_per_s", output_tokens / span_s},
            {"prefill_tokens_per_s", prompt_tokens / span_s}}},
          {"slo", slo},
          {"goodput", {{"requests", good}, {"requests_per_s", good / span_s}, {"fraction", total ? double(good) / total : 0.0}}},
          {"gpu_utilisation", total_gpus ? busy_gpu_s / (double(in.scenario.platform.gpu_count()) * span_s) : 0.0},
          {"gpus_in_instances", total_gpus},
          {"instances", instances},
          {"queue_length", {{"max", max_waiting}, {"window_s", span_s / kWindows}, {"t_s", t_axis}, {"waiting", waiting}}},
          // How many grid shapes the run looked up (step_costs.csv); whether they came from the cache is logged
          // only, so that the summary does not depend on what earlier runs left there.
          {"step_costs", {{"shapes", in.costs.costs().size()}}}};
}

json serve_spec_json(const ServeSpec& spec) {
  const RequestSourceSpec& src = spec.source;
  json classes = json::array();
  for (const InstanceClass& c : spec.classes)
    classes.push_back({{"cp", c.cp}, {"instances", c.count}, {"max_batch", c.max_batch ? c.max_batch : spec.max_batch},
                       {"max_prompt_tokens", c.max_prompt_tokens ? json(c.max_prompt_tokens) : json(nullptr)}});
  const char* arrivals = src.arrivals == RequestSourceSpec::Arrivals::TRACE   ? "trace"
                         : src.arrivals == RequestSourceSpec::Arrivals::GAMMA ? "gamma"
                                                                              : "poisson";
  const char* prefill = spec.prefill_algorithm == PrefillAlgorithm::PASS_Q         ? "pass-q"
                        : spec.prefill_algorithm == PrefillAlgorithm::BY_MISS_RATE ? "by-miss-rate"
                                                                                   : "pass-kv";
  return {{"source",
           {{"arrivals", arrivals},
            {"rate_per_s", src.arrivals == RequestSourceSpec::Arrivals::TRACE ? json(nullptr) : json(src.rate_per_s)},
            {"requests", src.requests},
            {"seed", src.seed},
            {"file", src.file}}},
          {"policy",
           {{"name", spec.policy_name},
            {"kind", spec.policy == ServePolicy::LENGTH_BUCKETS ? "length-buckets" : "static"},
            {"classes", classes},
            {"tp", spec.tp},
            {"prefill_algorithm", prefill},
            {"miss_rate_threshold", spec.miss_rate_threshold},
            {"decode_algorithm", spec.decode_pass_q ? "pass-q" : "tree"}}},
          {"scheduler",
           {{"chunk_tokens", spec.chunk_tokens},
            {"max_batch", spec.max_batch},
            {"on_kv_full", spec.refuse_when_full ? "refuse" : "wait"}}},
          {"max_time_s", spec.max_time_s}};
}

void write_serve_trace(std::ostream& out, const ServeInputs& in) {
  bool first = true;
  const auto event = [&](const std::string& e) {
    out << (first ? "" : ",\n") << e;
    first = false;
  };
  out << "{\"traceEvents\":[\n";
  event(R"({"ph":"M","pid":1,"tid":0,"ts":0,"cat":"__metadata","name":"process_name","args":{"name":"serve instances"}})");
  for (std::size_t i = 0; i < in.instances.size(); ++i) {
    const ServeInstance& inst = in.instances[i];
    event(fmt::format(R"({{"ph":"M","pid":1,"tid":{},"ts":0,"cat":"__metadata","name":"thread_name","args":{{"name":{}}}}})",
                      i + 1, json_quoted(fmt::format("instance {} (cp {} x tp {}, GPUs {})", i, inst.cp, inst.tp, gpu_range(inst)))));
    event(fmt::format(R"({{"ph":"M","pid":1,"tid":{},"ts":0,"cat":"__metadata","name":"thread_sort_index","args":{{"sort_index":{}}}}})",
                      i + 1, i + 1));
  }
  for (const StepRecord& s : in.run.steps) {
    std::string name;
    if (s.prefill_request >= 0) {
      const Request& r = in.requests[s.prefill_request];
      const bool whole = s.prefill_tokens == r.prompt_tokens - r.cached_tokens;
      name = fmt::format("{} r{} ({} tokens)", whole ? "prefill" : "chunk", r.id, s.prefill_tokens);
    }
    if (s.decode_batch > 0) name += fmt::format("{}decode x{}", name.empty() ? "" : " + ", s.decode_batch);
    const std::int64_t start = std::llround(s.start_s * 1e9), end = std::llround(s.end_s * 1e9);
    event(fmt::format(R"({{"ph":"X","pid":1,"tid":{},"ts":{},"dur":{},"cat":"serve","name":{},"args":{{"prefill_request":{},"prefill_tokens":{},"decode_batch":{},"mean_context":{}}}}})",
                      s.instance + 1, us(start * 1e-9), us((end - start) * 1e-9), json_quoted(name),
                      s.prefill_request >= 0 ? in.requests[s.prefill_request].id : -1, s.prefill_tokens,
                      s.decode_batch, std::llround(s.mean_context)));
  }
  for (const auto& [t_s, waiting] : in.run.waiting)
    event(fmt::format(R"({{"ph":"C","pid":1,"tid":0,"ts":{},"cat":"serve","name":"waiting requests","args":{{"requests":{}}}}})",
                      us(t_s), waiting));
  out << "\n],\n\"displayTimeUnit\":\"ns\",\n";
  out << fmt::format("\"metadata\":{{\"generator\":\"cpsim\",\"scenario\":{},\"phase\":\"serve\"}}}}\n",
                     json_quoted(in.scenario.name));
}

std::vector<std::string> serve_headline(const ServeInputs& in, const json& s) {
  std::vector<std::string> lines;
  const json& r = s["requests"];
  lines.push_back(fmt::format("{}: served {} of {} requests in {} ({} refused, {} unfinished) on {} instances",
                              in.scenario.name, r["done"].get<int>(), r["total"].get<int>(),
                              format_time(in.run.end_s), r["refused"].get<int>(), r["unfinished"].get<int>(),
                              in.instances.size()));
  const auto line = [&](const char* label, const char* key) {
    if (s[key].is_null()) return;
    lines.push_back(fmt::format("  {}: p50 {}  p90 {}  p99 {}", label, format_time(s[key]["p50"].get<double>()),
                                format_time(s[key]["p90"].get<double>()), format_time(s[key]["p99"].get<double>())));
  };
  line("TTFT", "ttft_s");
  line("TPOT", "tpot_s");
  lines.push_back(fmt::format("  throughput {:.3f} requests/s, {:.0f} output tokens/s; goodput {:.3f} requests/s "
                              "({:.1f}% within the SLO); GPU utilisation {:.1f}%",
                              s["throughput"]["requests_per_s"].get<double>(),
                              s["throughput"]["output_tokens_per_s"].get<double>(),
                              s["goodput"]["requests_per_s"].get<double>(),
                              100 * s["goodput"]["fraction"].get<double>(), 100 * s["gpu_utilisation"].get<double>()));
  lines.push_back(fmt::format("  step costs: {} grid shapes simulated by cpsim (step_costs.csv)", in.costs.costs().size()));
  return lines;
}

}  // namespace cpsim
