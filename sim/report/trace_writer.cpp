#include "sim/report/trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "platforms/topology.hpp"
#include "sim/report/json_text.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {
namespace {

std::int64_t to_ns(double t_s) { return std::llround(t_s * 1e9); }
std::string us(std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

constexpr int kLayersStream = 1;
constexpr int kComputeStream = 2;

// One slice waiting to be written, placed on a lane of a (GPU, traffic class, direction) stream family.
struct CommSlice {
  std::int64_t start_ns, end_ns;
  int other_end;       // the receiver of a send slice, the sender of a receive slice
  TaskId task;
  std::uint64_t copy;  // copy_key(task, copy)
  bool send;
};

// A link the platform builder named after its GPU: "<class>/" (a staggered class's copy of the network, or none),
// "n<node>_", "nvl" or "nic", "<local GPU>_", "UP" or "DOWN".
// A SimGrid link of a GPU's port, "[<network copy>/]<port>_UP|_DOWN" (platforms/topology.hpp names the ports).
struct GpuLinkName {
  std::string prefix, direction;
  PortName port;

  static std::optional<GpuLinkName> parse(const std::string& name) {
    const std::size_t slash = name.find('/'), from = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t underscore = name.rfind('_');
    if (underscore == std::string::npos || underscore < from) return std::nullopt;
    GpuLinkName n;
    n.prefix = name.substr(0, from);
    n.direction = name.substr(underscore + 1);
    if (n.direction != "UP" && n.direction != "DOWN") return std::nullopt;
    const auto port = PortName::parse(std::string_view(name).substr(from, underscore - from));
    if (!port) return std::nullopt;
    n.port = *port;
    return n;
  }
  std::string at(int node, int local_gpu) const {
    return prefix + PortName{port.kind, node, local_gpu}.str() + "_" + direction;
  }
};

struct LayerSlice {
  std::int64_t start_ns, end_ns;
  int layer, gpu, stream;
};

class TraceBuilder {
 public:
  TraceBuilder(std::ostream& out, const Scenario& s, const TaskGraph& g, const ExecutionResult& r,
               const std::vector<MemoryTimeline>* memory)
      : out_(out), s_(s), g_(g), r_(r), memory_(memory), gpus_(RankLayout(s.parallel).simulated_gpus()),
        gpu_shown_(gpus_, s.trace_gpus.empty()), layer_shown_(g.layers().size(), s.trace_layers.empty()),
        symmetry_(g.symmetry()), copies_(g.copies_per_task()) {
    for (int gpu : s.trace_gpus) gpu_shown_[gpu] = true;
    for (int gpu = 0; gpu < gpus_; ++gpu) {
      const GpuSlot& slot = s.platform.gpus[gpu];
      gpu_at_[{slot.node, slot.local_gpu}] = gpu;
      if (gpu_shown_[gpu]) node_shown_.insert(slot.node);
    }
    for (std::size_t l = 0; l < g.layers().size() && !s.trace_layers.empty(); ++l) {  // listed as model layers
      const LayerInfo& info = g.layers()[l];
      const int model_layer = info.place.model_layer >= 0 ? info.place.model_layer : info.index;
      layer_shown_[l] = std::binary_search(s.trace_layers.begin(), s.trace_layers.end(), model_layer);
    }
  }

  TraceStats write() {
    out_ << "{\"traceEvents\":[\n";
    std::vector<int> next_stream(gpus_, kComputeStream + 1);  // per GPU: the next free thread after compute
    assign_layer_lanes(next_stream);
    assign_lanes(next_stream);
    write_metadata();
    write_layers();
    write_tasks();
    write_link_counters();
    write_memory_counters();
    out_ << "\n],\n\"displayTimeUnit\":\"ns\",\n";
    out_ << fmt::format("\"metadata\":{{\"generator\":\"cpsim\",\"scenario\":{},\"cp\":{},\"tp\":{},\"seq_len\":{}}}}}\n",
                        json_quoted(s_.name), s_.parallel.cp, s_.parallel.tp, s_.run.seq_len);
    return stats_;
  }

 private:
  void event(const std::string& json) {
    out_ << (first_ ? "" : ",\n") << json;
    first_ = false;
  }
  int pid(int gpu) const { return gpu + 1; }
  // outputs.trace_gpus / trace_layers: what the trace shows (everything by default). Tasks outside every layer
  // (pipeline sends) follow their GPUs only.
  bool shown_gpu(int gpu) const { return gpu >= 0 && gpu_shown_[gpu]; }
  bool shown_layer(int layer) const { return layer < 0 || layer_shown_[layer]; }
  int tid(int gpu, int stream) const { return pid(gpu) * 100 + stream; }

  // A collapsed run (workloads/rank_symmetry.hpp) keeps one task per orbit; copy c of task i runs on every GPU
  // rotated by c, at the same times. Uncollapsed, every task has one copy, itself.
  int on_copy(int gpu, int copy) const { return gpu < 0 || !symmetry_ ? gpu : symmetry_->rotate(gpu, copy); }
  std::uint64_t copy_key(TaskId i, int copy) const { return std::uint64_t(i) * copies_ + copy; }

  // Lanes: greedy first-fit over slices sorted by start, per (gpu, class, direction) family.
  void assign_lanes(std::vector<int>& next_stream) {
    // Keyed (gpu, class, is_recv) so that a GPU's send lanes come before its receive lanes.
    std::map<std::tuple<int, int, bool>, std::vector<CommSlice>> families;
    g_.for_each_task([&](TaskId i, const Task& t) {
      if (t.kind != TaskKind::FLOW || !shown_layer(t.layer)) return;
      const std::int64_t s = to_ns(r_.start_s[i]), e = to_ns(r_.finish_s[i]);
      for (int c = 0; c < copies_; ++c) {
        const int src = on_copy(t.gpu, c), dst = on_copy(t.peer, c);
        if (shown_gpu(src)) families[{src, int(t.traffic), false}].push_back({s, e, dst, i, copy_key(i, c), true});
        if (shown_gpu(dst))
          families[{dst, int(t.traffic), true}].push_back({recv_start_ns(i), e, src, i, copy_key(i, c), false});
      }
    });
    for (auto& [key, slices] : families) {
      auto [gpu, cls, is_recv] = key;
      const bool send = !is_recv;
      // Ties broken by what the slices show, not by task ids, so that a collapsed run's trace lays its lanes out
      // as the full run's does (slices alike in all of these are interchangeable).
      const auto shown_as = [this](const CommSlice& sl) {
        const Task& t = g_.task(sl.task);
        return std::make_tuple(sl.start_ns, sl.end_ns, sl.other_end, t.layer, t.step, t.name, sl.copy);
      };
      std::sort(slices.begin(), slices.end(),
                [&](const CommSlice& a, const CommSlice& b) { return shown_as(a) < shown_as(b); });
      std::vector<std::int64_t> lane_end;
      for (const auto& sl : slices) {
        std::size_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > sl.start_ns) ++lane;
        if (lane == lane_end.size()) {
          lane_end.push_back(0);
          const int stream = next_stream[gpu]++;
          const std::string name = fmt::format("{} {}{}", traffic_name(Traffic(cls)), send ? "send" : "recv",
                                               lane ? fmt::format(" {}", lane + 1) : "");
          lanes_[{gpu, cls, send, int(lane)}] = stream;
          thread_names_[{gpu, stream}] = name;
        }
        lane_end[lane] = sl.end_ns;
        (send ? send_stream_ : recv_stream_)[sl.copy] = lanes_[{gpu, cls, send, int(lane)}];
      }
    }
  }

  std::int64_t recv_start_ns(TaskId i) const {
    return std::min(to_ns(r_.start_s[i] + g_.task(i).duration_s + r_.routes[r_.route_of_task[i]].latency_s), to_ns(r_.finish_s[i]));
  }

  void write_metadata() {
    const RankLayout layout(s_.parallel);
    for (int gpu = 0; gpu < gpus_; ++gpu) {
      if (!shown_gpu(gpu)) continue;
      const auto& slot = s_.platform.gpus[gpu];
      const auto c = layout.coord(gpu);
      const int p = pid(gpu);
      // Replicas simulated side by side (gradient sync) also name their DP rank.
      std::string dp = s_.parallel.simulated_dp > 1 ? fmt::format("dp{} ", layout.replica(gpu).first) : "";
      if (s_.parallel.pp > 1) dp += fmt::format("stage {} ", layout.stage(gpu));
      event(fmt::format(R"J({{"ph":"M","pid":{},"tid":0,"ts":0,"cat":"__metadata","name":"process_name","args":{{"name":"node{} gpu{} ({}cp{} tp{})"}}}})J",
                        p, slot.node, slot.local_gpu, dp, c.cp, c.tp));
      event(fmt::format(R"({{"ph":"M","pid":{},"tid":0,"ts":0,"cat":"__metadata","name":"process_sort_index","args":{{"sort_index":{}}}}})", p, gpu));
      thread_names_[{gpu, kLayersStream}] = "layers";
      thread_names_[{gpu, kComputeStream}] = "compute";
      ++stats_.processes;
    }
    for (const auto& [key, name] : thread_names_) {
      const auto [gpu, stream] = key;
      event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"ts":0,"cat":"__metadata","name":"thread_name","args":{{"name":{}}}}})",
                        pid(gpu), tid(gpu, stream), json_quoted(name)));
      event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"ts":0,"cat":"__metadata","name":"thread_sort_index","args":{{"sort_index":{}}}}})",
                        pid(gpu), tid(gpu, stream), sort_index(gpu, stream)));
    }
  }

  // Lanes in the order people read them: the layer lanes ("layers", "layers 2", ...), compute, then each
  // communication family's lanes together (assign_lanes allocates a family's streams consecutively).
  int sort_index(int gpu, int stream) const {
    static const std::vector<int> kNoLanes;
    const auto found = layer_streams_.find(gpu);
    const auto& layers = found == layer_streams_.end() ? kNoLanes : found->second;
    const int lanes = static_cast<int>(layers.size());
    for (int i = 0; i < lanes; ++i)
      if (layers[i] == stream) return 1 + i;
    return stream == kComputeStream ? 1 + std::max(lanes, 1) : stream + std::max(lanes, 1) - 1;
  }

  // A task name quoted for JSON, once per interned name and suffix ("" / " send" / " recv").
  const std::string& quoted_name(std::uint16_t id, int suffix) {
    static constexpr const char* kSuffix[] = {"", " send", " recv"};
    auto& cached = quoted_names_[{id, suffix}];
    if (cached.empty()) cached = json_quoted(g_.name(id) + kSuffix[suffix]);
    return cached;
  }

  // `quoted_name`: already a JSON string (json_quoted).
  void slice(int gpu, int stream, std::int64_t start, std::int64_t end, const char* cat, const std::string& quoted_name,
             const std::string& args) {
    event(fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"cat":"{}","name":{},"args":{{{}}}}})", pid(gpu),
                      tid(gpu, stream), us(start), us(end - start), cat, quoted_name, args));
    ++stats_.slices;
  }

  // A GPU's window in each layer (first task start to last task end). Micro-batches interleave layers, so windows
  // of one GPU may overlap: first-fit lanes "layers", "layers 2", ... keep every lane properly nested.
  void assign_layer_lanes(std::vector<int>& next_stream) {
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> span(
        g_.layers().size(), std::vector<std::pair<std::int64_t, std::int64_t>>(gpus_, {INT64_MAX, -1}));
    g_.for_each_task([&](TaskId i, const Task& t) {
      if (t.layer < 0 || !shown_layer(t.layer)) return;
      for (int c = 0; c < copies_; ++c)
        for (int gpu : {on_copy(t.gpu, c), on_copy(t.peer, c)}) {
          if (gpu < 0) continue;
          auto& [a, b] = span[t.layer][gpu];
          a = std::min(a, to_ns(r_.start_s[i]));
          b = std::max(b, to_ns(r_.finish_s[i]));
        }
    });
    for (int gpu = 0; gpu < gpus_; ++gpu) {
      if (!shown_gpu(gpu)) continue;
      std::vector<LayerSlice> slices;
      for (std::size_t l = 0; l < span.size(); ++l)
        if (span[l][gpu].second >= 0) slices.push_back({span[l][gpu].first, span[l][gpu].second, int(l), gpu, 0});
      std::stable_sort(slices.begin(), slices.end(),
                       [](const LayerSlice& a, const LayerSlice& b) { return a.start_ns < b.start_ns; });
      std::vector<std::pair<std::int64_t, int>> lanes;  // (end of its last slice, stream)
      for (auto& sl : slices) {
        std::size_t lane = 0;
        while (lane < lanes.size() && lanes[lane].first > sl.start_ns) ++lane;
        if (lane == lanes.size()) {
          const int stream = lane == 0 ? kLayersStream : next_stream[gpu]++;
          lanes.emplace_back(0, stream);
          thread_names_[{gpu, stream}] = lane == 0 ? "layers" : fmt::format("layers {}", lane + 1);
          layer_streams_[gpu].push_back(stream);
        }
        lanes[lane].first = sl.end_ns;
        sl.stream = lanes[lane].second;
        layer_slices_.push_back(sl);
      }
    }
  }

  void write_layers() {
    for (const LayerSlice& sl : layer_slices_) {
      const LayerInfo& info = g_.layers()[sl.layer];
      slice(sl.gpu, sl.stream, sl.start_ns, sl.end_ns, "layer", json_quoted(info.display_name()),
            fmt::format(R"("layer":{},"kind":"{}","cp_algorithm":"{}")", sl.layer, info.kind_name(), info.algorithm_name()));
    }
  }

  void write_tasks() {
    std::size_t flow_id = 0;
    g_.for_each_task([&](TaskId i, const Task& t) {
      if (!shown_layer(t.layer)) return;
      const std::int64_t start = to_ns(r_.start_s[i]), end = to_ns(r_.finish_s[i]);
      for (int c = 0; c < copies_; ++c) {
        const int src = on_copy(t.gpu, c), dst = on_copy(t.peer, c);
        if (t.kind == TaskKind::COMPUTE) {
          if (!shown_gpu(src)) continue;
          slice(src, kComputeStream, start, end, "compute", quoted_name(t.name, 0),
                fmt::format(R"("layer":{},"step":{},"flops":{},"hbm_bytes":{})", t.layer, t.step, t.flops, t.bytes));
          continue;
        }
        const char* cat = t.traffic == Traffic::CP ? "cp_comm" : t.traffic == Traffic::TP ? "tp_comm" : "comm";
        const std::int64_t arrive = recv_start_ns(i);
        // DevTools drops arrows whose ends share a timestamp, and an arrow must end inside its receive slice, which
        // has no extent when the payload takes under a nanosecond (a tree-decode max or sum).
        const bool arrow = arrive > start && end > arrive;
        const std::uint64_t key = copy_key(i, c);
        const std::string args = fmt::format(R"("bytes":{},"src":{},"dst":{},"layer":{},"step":{},"xfer":{})",
                                             std::llround(t.bytes), src, dst, t.layer, t.step, key);
        if (shown_gpu(src)) slice(src, send_stream_[key], start, end, cat, quoted_name(t.name, 1), args);
        if (shown_gpu(dst)) slice(dst, recv_stream_[key], arrive, end, cat, quoted_name(t.name, 2), args);
        if (!arrow || !shown_gpu(src) || !shown_gpu(dst)) continue;
        ++flow_id;
        event(fmt::format(R"({{"ph":"s","pid":{},"tid":{},"ts":{},"cat":"{}","name":{},"id":{}}})", pid(src),
                          tid(src, send_stream_[key]), us(start), cat, quoted_name(t.name, 0), flow_id));
        event(fmt::format(R"({{"ph":"f","bp":"e","pid":{},"tid":{},"ts":{},"cat":"{}","name":{},"id":{}}})",
                          pid(dst), tid(dst, recv_stream_[key]), us(arrive), cat, quoted_name(t.name, 0), flow_id));
        ++stats_.flows;
      }
    });
  }

  // One counter per GPU process: its memory in GiB (3 decimals), a point at each change.
  void write_memory_counters() {
    if (!memory_) return;
    for (int gpu = 0; gpu < gpus_ && gpu < int(memory_->size()); ++gpu) {
      if (!shown_gpu(gpu)) continue;
      ++stats_.counter_tracks;
      double last = -1;
      for (const auto& [t_s, bytes] : (*memory_)[gpu].points) {
        const double gib = std::round(bytes / double(1ull << 30) * 1000) / 1000;
        if (gib == last) continue;
        last = gib;
        event(fmt::format(R"({{"ph":"C","pid":{},"tid":0,"ts":{},"cat":"memory","name":"memory","args":{{"GiB":{}}}}})",
                          pid(gpu), us(to_ns(t_s)), gib));
      }
    }
  }

  // Link utilisation: every flow of the shown layers counts (a link's load is physical, whoever it carries), and the
  // links shown are those of the shown GPUs' nodes and the fabric's.
  void write_link_counters() {
    // Per directed link: +rate at transfer start, -rate at its end.
    std::vector<std::map<std::int64_t, double>> deltas(r_.link_names.size());
    g_.for_each_task([&](TaskId i, const Task& t) {
      if (t.kind != TaskKind::FLOW || !shown_layer(t.layer)) return;
      const FlowRoute& route = r_.routes[r_.route_of_task[i]];
      const double t0 = r_.start_s[i] + t.duration_s + route.latency_s, t1 = r_.finish_s[i];
      if (t1 <= t0) return;
      const double rate = t.bytes / (t1 - t0);
      for (auto link : route.links) {
        deltas[link][to_ns(t0)] += rate;
        deltas[link][to_ns(t1)] -= rate;
      }
    });
    // Grouped per node: a node's NVLink ports and NICs under "node<k> links", after the GPUs; switch, spine and
    // XML-named links under "fabric links". Within a group, by name.
    std::map<int, std::vector<std::pair<std::string, std::size_t>>> by_group;  // node (-1: fabric): (name, link)
    for (std::size_t link = 0; link < r_.link_names.size(); ++link) {
      if (deltas[link].empty()) continue;
      for (const auto& [node, name] : orbit_of_link(r_.link_names[link]))
        if (node < 0 || node_shown_.count(node)) by_group[node].push_back({name, link});
    }
    for (auto& [node, links] : by_group) {
      const int p = node < 0 ? gpus_ + 1 : gpus_ + 2 + node;
      const std::string name = node < 0 ? "fabric links" : fmt::format("node{} links", node);
      event(fmt::format(R"({{"ph":"M","pid":{},"tid":0,"ts":0,"cat":"__metadata","name":"process_name","args":{{"name":"{}"}}}})", p, name));
      event(fmt::format(R"({{"ph":"M","pid":{},"tid":0,"ts":0,"cat":"__metadata","name":"process_sort_index","args":{{"sort_index":{}}}}})", p, p));
      std::sort(links.begin(), links.end());
      for (const auto& [link_name, link] : links) write_link_counter(p, link_name, link, deltas[link]);
    }
  }

  // (node or -1, name) of every link a simulated link stands for: itself, or in a collapsed run (whose routes are
  // folded onto the representatives' ports) each GPU of the representative's orbit's port of the same kind, which
  // carries the same traffic rotated.
  std::vector<std::pair<int, std::string>> orbit_of_link(const std::string& name) const {
    const auto parsed = GpuLinkName::parse(name);
    if (!parsed) return {{-1, name}};
    const auto found = gpu_at_.find({parsed->port.node, parsed->port.local_gpu});
    if (!symmetry_ || found == gpu_at_.end() || !symmetry_->is_representative(found->second))
      return {{parsed->port.node, name}};
    std::vector<std::pair<int, std::string>> orbit;
    for (int c = 0; c < copies_; ++c) {
      const GpuSlot& slot = s_.platform.gpus[on_copy(found->second, c)];
      orbit.push_back({slot.node, parsed->at(slot.node, slot.local_gpu)});
    }
    return orbit;
  }

  void write_link_counter(int p, const std::string& link_name, std::size_t link,
                          const std::map<std::int64_t, double>& deltas) {
    ++stats_.counter_tracks;
    const std::string name = json_quoted("link " + link_name);
    double rate = 0, last = -1;
    for (const auto& [ts, d] : deltas) {
      rate += d;
      double util = rate / r_.link_bw_Bps[link];
      if (std::fabs(util) < 1e-9) util = 0;
      util = std::round(util * 1e6) / 1e6;
      if (util == last) continue;
      last = util;
      event(fmt::format(R"({{"ph":"C","pid":{},"tid":0,"ts":{},"cat":"link","name":{},"args":{{"util":{}}}}})", p,
                        us(ts), name, util));
    }
  }

  std::ostream& out_;
  const Scenario& s_;
  const TaskGraph& g_;
  const ExecutionResult& r_;
  const std::vector<MemoryTimeline>* memory_;
  int gpus_;
  std::vector<bool> gpu_shown_, layer_shown_;
  const RankSymmetry* symmetry_;  // a collapsed run's, or null
  int copies_;                    // GPUs each task stands for
  std::map<std::pair<int, int>, int> gpu_at_;  // (node, local index) -> GPU
  std::set<int> node_shown_;                   // nodes with a shown GPU
  bool first_ = true;
  TraceStats stats_;
  std::map<std::tuple<int, int, bool, int>, int> lanes_;
  std::vector<LayerSlice> layer_slices_;
  std::map<std::pair<int, int>, std::string> thread_names_;
  std::unordered_map<std::uint64_t, int> send_stream_, recv_stream_;  // by copy_key (looked up, never iterated)
  std::map<int, std::vector<int>> layer_streams_;  // per GPU: its layer lanes' streams, in lane order
  std::map<std::pair<std::uint16_t, int>, std::string> quoted_names_;
};

}  // namespace

TraceStats write_trace(std::ostream& out, const Scenario& s, const TaskGraph& g, const ExecutionResult& r,
                       const std::vector<MemoryTimeline>* memory) {
  return TraceBuilder(out, s, g, r, memory).write();
}

}  // namespace cpsim
