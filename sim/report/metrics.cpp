#include "sim/report/metrics.hpp"

#include <algorithm>
#include <map>

#include "sim/report/pipeline_metrics.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/relayout.hpp"
#include "workloads/volumes.hpp"

namespace cpsim {
namespace {

using Interval = std::pair<double, double>;

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double sum = 0;
  for (const auto& [a, b] : v) sum += b - a;
  return sum;
}

// Length of `a` not covered by `b` (both merged and sorted).
double uncovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double overlap = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : a) {
    while (j < b.size() && b[j].second <= s) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < e; ++k)
      overlap += std::min(e, b[k].second) - std::max(s, b[k].first);
  }
  return length(a) - overlap;
}

struct RankLayerTimes {
  double first = 1e300, last = -1;
  std::vector<Interval> compute, comm;
  std::vector<Interval> cp_comm;  // CP flows touching the GPU
  double attention_s = 0;         // its kernels with an algorithm step: the CP attention lowering's
};

// A flow's transfer time alone on its route: latency + bytes / the route's narrowest link (SimGrid CM02 with
// unit factors, as the platform builder configures it).
// A flow alone on its route: its fixed cost, the wire latency and its bytes at the bottleneck.
double uncontended_s(const ExecutionResult& r, TaskId id, const Task& t) {
  const FlowRoute& route = r.routes[r.route_of_task[id]];
  double bw_Bps = 1e300;
  for (std::uint32_t l : route.links) bw_Bps = std::min(bw_Bps, r.link_bw_Bps[l]);
  return t.duration_s + route.latency_s + (route.links.empty() ? 0.0 : t.bytes / bw_Bps);
}

// The hidden states' all-to-all between layer kinds of different token layouts (workloads/relayout.hpp).
bool is_relayout(const TaskGraph& g, const Task& t) { return g.name(t.name).rfind("cp re-layout", 0) == 0; }

// What one GPU did in one layer, from its task intervals.
struct LayerOnGpu {
  bool present = false;
  LayerWindow window;
  double attention_s = 0;
  double compute_s = 0, exposed_comm_s = 0;  // its busy time in the layer; its comm not hidden by any kernel
  double cp_overlap_s = 0;                   // its CP flows' time beside TP/EP flows
  std::vector<Interval> comm;                // merged
};

LayerOnGpu summarize(RankLayerTimes& rl, const std::vector<Interval>& busy_all, const std::vector<Interval>& other) {
  LayerOnGpu out;
  if (rl.last < 0) return out;
  out.present = true;
  out.window = {rl.first, rl.last};
  out.attention_s = rl.attention_s;
  out.comm = merged(std::move(rl.comm));
  out.compute_s = length(merged(std::move(rl.compute)));
  out.exposed_comm_s = uncovered(out.comm, busy_all);
  const auto cp = merged(std::move(rl.cp_comm));
  out.cp_overlap_s = length(cp) - uncovered(cp, other);
  rl = RankLayerTimes{};  // release this layer's intervals as we go
  return out;
}

ContentionMetrics& operator+=(ContentionMetrics& a, const ContentionMetrics& b) {
  a.cp_overlap_with_tp_ep_s += b.cp_overlap_with_tp_ep_s;
  a.flow_wait_s += b.flow_wait_s;
  a.flow_slowdown_s += b.flow_slowdown_s;
  a.compute_slowdown_s += b.compute_slowdown_s;
  return a;
}

}  // namespace

Metrics compute_metrics(const Scenario& s, const TaskGraph& g, const ExecutionResult& r) {
  Metrics m;
  m.makespan_s = r.makespan_s;
  // A collapsed graph keeps one task per orbit (workloads/rank_symmetry.hpp): each stands for copies_per_task().
  m.tasks = g.task_count() * g.copies_per_task();
  m.flows = g.flow_count() * g.copies_per_task();
  const RankSymmetry* symmetry = g.symmetry();
  // The GPU whose figures a GPU's are: itself, or the representative it mirrors.
  const auto source_of = [symmetry](int gpu) { return symmetry ? symmetry->representative(gpu) : gpu; };
  // A flow's receiving side, in the figures: the receiver, or the representative receiving the rotated copy.
  const auto receiver = [&source_of](const Task& t) { return source_of(t.peer); };
  const int gpus = RankLayout(s.parallel).simulated_gpus();
  const WorkloadInputs in{s.model, s.run, s.parallel, s.cp, s.platform.gpu};
  const RankLayout layout(s.parallel);
  std::vector<MemoryBreakdown> stage_memories;
  for (int stage = 0; stage < s.parallel.pp; ++stage) stage_memories.push_back(stage_memory(in, stage));
  std::vector<MemoryBreakdown> memory;  // per GPU
  for (int gpu = 0; gpu < gpus; ++gpu) {
    RankMetrics rm;
    rm.gpu = gpu;
    rm.node = s.platform.gpus[gpu].node;
    rm.local_gpu = s.platform.gpus[gpu].local_gpu;
    rm.dp_rank = layout.replica(gpu).first;
    rm.cp_rank = layout.coord(gpu).cp;
    rm.tp_rank = layout.coord(gpu).tp;
    rm.pp_stage = layout.stage(gpu);
    rm.memory = stage_memories[rm.pp_stage];
    memory.push_back(rm.memory);
    m.ranks.push_back(rm);
  }

  const std::size_t n_layers = g.layers().size();
  // CP bytes received per (layer, gpu).
  std::vector<std::vector<double>> cp_received(n_layers, std::vector<double>(gpus, 0));
  std::vector<std::vector<double>> relayout_received(n_layers, std::vector<double>(gpus, 0));
  // Per (layer, GPU), summed over the layer's GPUs in GPU order below: the same sums, bit for bit, whether the graph
  // is collapsed or not.
  std::vector<std::vector<ContentionMetrics>> gpu_contention(n_layers, std::vector<ContentionMetrics>(gpus));
  // TP/EP/DP/PP flows touching each GPU, over the whole run: a CP flow of one micro-batch's layer can overlap the
  // collectives of another micro-batch's layer.
  std::vector<std::vector<Interval>> other_comm(gpus);
  // Every GPU's compute and comm over the whole run: comm is exposed only when no kernel of any layer runs beside
  // it (a layer's gradient all-reduce or another micro-batch's collectives hide behind other layers' kernels).
  std::vector<std::vector<Interval>> busy_all(gpus), comm_all(gpus);  // comm_all: merged per layer, appended below
  g.for_each_task([&](TaskId i, const Task& t) {
    const Interval iv{r.start_s[i], r.finish_s[i]};
    ContentionMetrics none;
    ContentionMetrics& layer_gpu = t.layer >= 0 ? gpu_contention[t.layer][t.gpu] : none;
    if (t.kind == TaskKind::COMPUTE) {
      busy_all[t.gpu].push_back(iv);
      m.ranks[t.gpu].compute_busy_s += iv.second - iv.first;
      // Rounding of start + duration leaves ~1e-16 s; only a real stretch (subtractive mode) counts.
      const double excess = (iv.second - iv.first) - t.duration_s;
      const double slowdown = excess > 1e-9 * t.duration_s ? excess : 0.0;
      m.ranks[t.gpu].contention.compute_slowdown_s += slowdown;
      layer_gpu.compute_slowdown_s += slowdown;
    } else {
      const double wait = std::max(0.0, r.start_s[i] - r.ready_s(static_cast<TaskId>(i)));
      m.ranks[t.gpu].contention.flow_wait_s += wait;
      layer_gpu.flow_wait_s += wait;
      // Bandwidth lost to sharing (links shared with other flows, or capacity taken by comm kernels).
      const double alone_s = uncontended_s(r, static_cast<TaskId>(i), t);
      const double lost = (iv.second - iv.first) - alone_s;
      const double slowdown = lost > 1e-9 * alone_s ? lost : 0.0;
      m.ranks[t.gpu].contention.flow_slowdown_s += slowdown;
      layer_gpu.flow_slowdown_s += slowdown;
      if (t.traffic != Traffic::CP)
        for (int gpu : {t.gpu, receiver(t)}) other_comm[gpu].push_back(iv);
      const auto cls = static_cast<std::size_t>(t.traffic);
      m.ranks[t.gpu].bytes_sent[cls] += t.bytes;
      m.ranks[receiver(t)].bytes_received[cls] += t.bytes;
      if (t.traffic == Traffic::CP && t.layer >= 0)  // a re-layout between kinds is not the kind's own traffic
        (is_relayout(g, t) ? relayout_received : cp_received)[t.layer][receiver(t)] += t.bytes;
    }
  });
  // Each layer's task intervals, gathered per GPU one layer at a time (tasks by layer, in id order), summarized and
  // released: the intervals of every layer at once were a third of a large run's peak memory.
  std::vector<std::uint32_t> layer_begin(n_layers + 1, 0), by_layer;
  g.for_each_task([&](TaskId, const Task& t) {
    if (t.layer >= 0) ++layer_begin[t.layer + 1];
  });
  for (std::size_t l = 0; l < n_layers; ++l) layer_begin[l + 1] += layer_begin[l];
  by_layer.resize(layer_begin.back());
  {
    std::vector<std::uint32_t> next(layer_begin.begin(), layer_begin.end() - 1);
    g.for_each_task([&](TaskId i, const Task& t) {
      if (t.layer >= 0) by_layer[next[t.layer]++] = i;
    });
  }
  std::vector<RankLayerTimes> layer_times(gpus);  // the layer being summarized
  const auto gather_layer = [&](std::size_t l) {
    for (std::size_t k = layer_begin[l]; k < layer_begin[l + 1]; ++k) {
      const std::uint32_t i = by_layer[k];
      const Task& t = g.task(static_cast<TaskId>(i));
      const Interval iv{r.start_s[i], r.finish_s[i]};
      for (int gpu : {t.gpu, t.kind == TaskKind::FLOW ? receiver(t) : -1}) {
        if (gpu < 0) continue;
        RankLayerTimes& rl = layer_times[gpu];
        rl.first = std::min(rl.first, iv.first);
        rl.last = std::max(rl.last, iv.second);
        (t.kind == TaskKind::COMPUTE ? rl.compute : rl.comm).push_back(iv);
        if (t.kind == TaskKind::COMPUTE && t.step >= 0) rl.attention_s += iv.second - iv.first;
        if (t.kind == TaskKind::FLOW && t.traffic == Traffic::CP) rl.cp_comm.push_back(iv);
      }
    }
  };
  // The GPUs a collapsed run did not simulate mirror their representatives.
  for (int gpu = 0; gpu < gpus; ++gpu) {
    const int from = source_of(gpu);
    if (from == gpu) continue;
    RankMetrics& rm = m.ranks[gpu];
    rm.compute_busy_s = m.ranks[from].compute_busy_s;
    rm.contention = m.ranks[from].contention;
    rm.bytes_sent = m.ranks[from].bytes_sent;
    rm.bytes_received = m.ranks[from].bytes_received;
    for (std::size_t l = 0; l < n_layers; ++l) {
      cp_received[l][gpu] = cp_received[l][from];
      relayout_received[l][gpu] = relayout_received[l][from];
      gpu_contention[l][gpu] = gpu_contention[l][from];
    }
  }
  for (const RankMetrics& rm : m.ranks)
    for (std::size_t c = 0; c < kTrafficClasses; ++c) m.total_bytes[c] += rm.bytes_sent[c];

  for (auto& v : other_comm) v = merged(std::move(v));
  for (auto& v : busy_all) v = merged(std::move(v));
  std::vector<std::vector<LayerWindow>> windows(n_layers, std::vector<LayerWindow>(gpus));
  std::vector<LayerOnGpu> on_gpu(gpus);
  for (std::size_t l = 0; l < n_layers; ++l) {
    LayerMetrics lm;
    lm.info = g.layers()[l];
    lm.t_start_s = 1e300;
    lm.t_end_s = -1;
    double busy_sum_s = 0, busy_max_s = 0;
    int present = 0;
    gather_layer(l);
    for (int gpu = 0; gpu < gpus; ++gpu)
      if (source_of(gpu) == gpu) on_gpu[gpu] = summarize(layer_times[gpu], busy_all[gpu], other_comm[gpu]);
    for (int gpu = 0; gpu < gpus; ++gpu) {
      const LayerOnGpu& o = on_gpu[source_of(gpu)];
      lm.contention += gpu_contention[l][gpu];
      if (!o.present) continue;
      windows[l][gpu] = o.window;
      busy_sum_s += o.attention_s, busy_max_s = std::max(busy_max_s, o.attention_s), ++present;
      lm.t_start_s = std::min(lm.t_start_s, o.window.first);
      if (o.window.last > lm.t_end_s) {
        lm.t_end_s = o.window.last, lm.critical_gpu = gpu;
        lm.compute_s = o.compute_s;
        lm.exposed_comm_s = o.exposed_comm_s;
      }
      if (source_of(gpu) == gpu) comm_all[gpu].insert(comm_all[gpu].end(), o.comm.begin(), o.comm.end());
      m.ranks[gpu].contention.cp_overlap_with_tp_ep_s += o.cp_overlap_s;
      lm.contention.cp_overlap_with_tp_ep_s += o.cp_overlap_s;
    }
    lm.idle_s = std::max(0.0, (lm.t_end_s - lm.t_start_s) - lm.compute_s - lm.exposed_comm_s);
    if (busy_max_s > 0) lm.attention_balance = busy_sum_s / present / busy_max_s;
    for (double b : relayout_received[l]) lm.relayout_bytes = std::max(lm.relayout_bytes, b);
    const int model_layer = lm.info.place.model_layer;
    if (s.run.phase != Phase::DECODE && model_layer >= 0)
      if (const std::optional<Partition> from = relayout_from(in, model_layer)) {
        const Partition to = layer_token_layout(in, model_layer);
        lm.relayout_formula_bytes = lm.info.backward ? relayout_max_received_bytes(in, to, *from)
                                                     : relayout_max_received_bytes(in, *from, to);
      }
    m.layers.push_back(lm);
  }
  for (int gpu = 0; gpu < gpus; ++gpu)
    m.ranks[gpu].exposed_comm_s = source_of(gpu) == gpu
                                      ? uncovered(merged(std::move(comm_all[gpu])), busy_all[gpu])
                                      : m.ranks[source_of(gpu)].exposed_comm_s;

  // Memory over time; the verdict is the highest peak (the first GPU that reaches it).
  m.memory_timelines = memory_timelines(in, g, memory, windows);
  for (int gpu = 0; gpu < gpus; ++gpu) {
    m.ranks[gpu].memory_peak_bytes = m.memory_timelines[gpu].peak_bytes;
    m.ranks[gpu].memory_peak_t_s = m.memory_timelines[gpu].peak_t_s;
    if (m.ranks[gpu].memory_peak_bytes > m.ranks[m.memory_peak_gpu].memory_peak_bytes) m.memory_peak_gpu = gpu;
  }
  const RankMetrics& peak = m.ranks[m.memory_peak_gpu];
  m.memory = memory_verdict(peak.memory, s.platform.gpu.hbm_bytes, peak.memory_peak_bytes);

  // Volumes: one row per (layer kind, CP algorithm) present.
  // Keyed by the printed labels, so that rows come out in their names' order.
  std::map<std::pair<std::string, std::string>, double> simulated;
  std::map<std::pair<std::string, std::string>, const LayerInfo*> layer_of;
  for (std::size_t l = 0; l < n_layers; ++l) {
    const LayerInfo& info = g.layers()[l];
    const std::pair<std::string, std::string> key{info.kind_name(), info.algorithm_name()};
    layer_of.try_emplace(key, &info);
    auto& v = simulated[key];
    for (double b : cp_received[l]) v = std::max(v, b);
  }
  std::map<std::pair<std::string, std::string>, KindBreakdown> kinds;
  for (std::size_t l = 0; l < n_layers; ++l) {
    const LayerMetrics& lm = m.layers[l];
    const std::pair<std::string, std::string> key{lm.info.kind_name(), lm.info.algorithm_name()};
    KindBreakdown& k = kinds[key];
    k.layer_kind = key.first;
    k.cp_algorithm = key.second;
    ++k.layers;
    k.time_s += lm.t_end_s - lm.t_start_s;
    k.compute_s += lm.compute_s;
    k.exposed_comm_s += lm.exposed_comm_s;
    k.idle_s += lm.idle_s;
    k.attention_balance = k.layers == 1 ? lm.attention_balance : std::min(k.attention_balance, lm.attention_balance);
    for (double b : cp_received[l]) k.cp_bytes_total += b;
    k.cp_bytes_per_rank_per_layer = simulated[key];
  }
  for (auto& [key, k] : kinds) m.by_kind.push_back(k);
  for (const auto& [key, bytes] : simulated) {
    VolumeRow row{key.first, key.second, bytes, std::nullopt, "", std::nullopt};
    if (auto f = cp_volume_per_rank(in, *layer_of.at(key))) {
      row.formula_bytes = f->bytes;
      row.formula = f->formula;
      row.exact = f->exact;
    }
    m.volumes.push_back(row);
  }
  add_pipeline_metrics(s, m);
  return m;
}

}  // namespace cpsim
