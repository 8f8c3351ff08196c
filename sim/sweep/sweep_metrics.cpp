#include "sim/sweep/sweep_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace cpsim {
namespace {

using json = nlohmann::json;

const json* find_path(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
  }
  return cur;
}

// Sum (or max) of a numeric field over the elements of an array; nullopt when the array or a field is missing.
template <class Fold>
std::optional<double> fold(const json& j, const char* array, std::initializer_list<const char*> field, Fold f) {
  const json* a = find_path(j, {array});
  if (!a || !a->is_array() || a->empty()) return std::nullopt;
  std::optional<double> acc;
  for (const auto& e : *a) {
    const json* v = find_path(e, field);
    if (!v || !v->is_number()) return std::nullopt;
    acc = acc ? f(*acc, v->get<double>()) : v->get<double>();
  }
  return acc;
}

const char* const kClasses[] = {"cp", "tp", "ep", "dp", "pp"};

}  // namespace

const std::vector<std::string>& fixed_metric_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"cp",
                                  "tp",
                                  "seq_len",
                                  "makespan_s",
                                  "critical_gpu",
                                  "critical_compute_s",
                                  "critical_exposed_comm_s",
                                  "critical_idle_s",
                                  "compute_busy_max_s",
                                  "compute_busy_mean_s",
                                  "exposed_comm_max_s"};
    for (const char* cls : kClasses) c.push_back(std::string(cls) + "_bytes_total");
    c.push_back("memory_max_bytes");
    c.push_back("fits");
    c.push_back("memory_overflow_bytes");
    c.push_back("phase");  // last, so that the earlier columns keep their places
    return c;
  }();
  return columns;
}

nlohmann::ordered_json point_metrics(const json& s) {
  nlohmann::ordered_json m = nlohmann::ordered_json::object();
  auto put = [&](const char* column, const json* v) {
    if (v && !v->is_null()) m[column] = *v;
  };
  auto put_number = [&](const char* column, std::optional<double> v) {
    if (v) m[column] = *v;
  };
  const auto max = [](double a, double b) { return std::max(a, b); };
  const auto sum = [](double a, double b) { return a + b; };

  put("cp", find_path(s, {"scenario", "parallel", "cp"}));
  put("tp", find_path(s, {"scenario", "parallel", "tp"}));
  put("seq_len", find_path(s, {"scenario", "run", "seq_len"}));
  put("makespan_s", find_path(s, {"makespan_s"}));
  // The timeline of the GPU that finishes last (the critical GPU of the last layer), from 0 to the makespan: its
  // compute busy time, its exposed communication, and the rest, waiting on other ranks (imbalance). Per-layer
  // windows overlap across GPUs, so summing the layers' breakdowns would overshoot the makespan.
  const json* layers = find_path(s, {"layers"});
  const json* makespan = find_path(s, {"makespan_s"});
  if (layers && layers->is_array() && !layers->empty() && makespan && makespan->is_number()) {
    const json* gpu = find_path(layers->back(), {"critical_gpu"});
    const json* ranks = find_path(s, {"ranks"});
    if (gpu && gpu->is_number_integer() && ranks && ranks->is_array())
      for (const auto& r : *ranks) {
        const json* id = find_path(r, {"gpu"});
        const json* busy = find_path(r, {"compute_busy_s"});
        const json* comm = find_path(r, {"exposed_comm_s"});
        if (!id || *id != *gpu || !busy || !busy->is_number() || !comm || !comm->is_number()) continue;
        m["critical_gpu"] = *gpu;
        m["critical_compute_s"] = *busy;
        m["critical_exposed_comm_s"] = *comm;
        m["critical_idle_s"] = std::max(0.0, makespan->get<double>() - busy->get<double>() - comm->get<double>());
      }
  }
  put_number("compute_busy_max_s", fold(s, "ranks", {"compute_busy_s"}, max));
  if (const auto total = fold(s, "ranks", {"compute_busy_s"}, sum))
    m["compute_busy_mean_s"] = *total / static_cast<double>(find_path(s, {"ranks"})->size());
  put_number("exposed_comm_max_s", fold(s, "ranks", {"exposed_comm_s"}, max));
  for (const char* cls : kClasses)
    put((std::string(cls) + "_bytes_total").c_str(), find_path(s, {"bytes_total", cls}));
  if (const auto mem = fold(s, "ranks", {"memory_bytes", "total"}, max)) m["memory_max_bytes"] = std::llround(*mem);
  put("fits", find_path(s, {"memory", "fits"}));
  put("memory_overflow_bytes", find_path(s, {"memory", "overflow_bytes"}));
  put("phase", find_path(s, {"scenario", "run", "phase"}));  // plots title themselves by it

  // Contention (sim/engine/contention.hpp), summed over the GPUs: when it is non-zero the row says where the time went.
  for (const char* key : {"cp_overlap_with_tp_ep_s", "flow_wait_s", "flow_slowdown_s", "compute_slowdown_s"})
    if (const auto total = fold(s, "ranks", {"contention", key}, sum); total && *total > 0)
      m[std::string("contention.") + key] = *total;
  // Pipeline stages: the largest stage bubble and the schedule's ideal, to see micro-batches fill the pipeline.
  put("pipeline.bubble_fraction", find_path(s, {"pipeline", "bubble_fraction"}));
  put("pipeline.ideal_bubble_fraction", find_path(s, {"pipeline", "ideal_bubble_fraction"}));

  // Serving runs (run.phase: serve, docs/serving.md): latency percentiles, throughput and goodput.
  for (const char* stat : {"ttft_s", "tpot_s", "e2e_s"})
    for (const char* p : {"p50", "p90", "p99"})
      put(fmt::format("serve.{}.{}", stat, p).c_str(), find_path(s, {"serve", stat, p}));
  put("serve.requests_total", find_path(s, {"serve", "requests", "total"}));
  put("serve.requests_done", find_path(s, {"serve", "requests", "done"}));
  put("serve.requests_refused", find_path(s, {"serve", "requests", "refused"}));
  put("serve.throughput_rps", find_path(s, {"serve", "throughput", "requests_per_s"}));
  put("serve.goodput_rps", find_path(s, {"serve", "goodput", "requests_per_s"}));
  put("serve.goodput_fraction", find_path(s, {"serve", "goodput", "fraction"}));
  put("serve.gpu_utilisation", find_path(s, {"serve", "gpu_utilisation"}));
  put("serve.slo_ttft_s", find_path(s, {"serve", "slo", "ttft_s"}));
  put("serve.slo_tpot_s", find_path(s, {"serve", "slo", "tpot_s"}));

  // Per layer kind: the CP bytes a rank receives in one layer (max over ranks and layers) and its check against the
  // seed's formula. Kinds are ordered by name so that the columns do not depend on the summary's order.
  std::map<std::string, const json*> kinds;
  if (const json* vols = find_path(s, {"volumes"}); vols && vols->is_array())
    for (const auto& v : *vols) {
      const json* kind = find_path(v, {"layer_kind"});
      const json* alg = find_path(v, {"cp_algorithm"});
      if (!kind || !kind->is_string()) continue;
      std::string name = kind->get<std::string>();
      if (kinds.count(name) && alg && alg->is_string()) name.append("/").append(alg->get<std::string>());
      kinds[name] = &v;
    }
  for (const auto& [name, v] : kinds) {
    if (const json* alg = find_path(*v, {"cp_algorithm"})) m["cp_algorithm." + name] = *alg;
    if (const json* b = find_path(*v, {"simulated_max_rank_received_bytes_per_layer"}))
      m["cp_bytes_per_layer." + name] = *b;
    if (const json* ok = find_path(*v, {"match"}); ok && ok->is_boolean()) m["formula_match." + name] = *ok;
  }
  return m;
}

}  // namespace cpsim
