#include "workloads/nccl_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cpsim {

const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::ALLREDUCE: return "allreduce";
    case CollectiveOp::ALLGATHER: return "allgather";
    default: return "reducescatter";
  }
}

namespace {

template <class Enum>
std::optional<Enum> parse_named(const std::string& text, int count, const char* (*name)(Enum)) {
  for (int i = 0; i < count; ++i)
    if (text == name(Enum(i))) return Enum(i);
  return std::nullopt;
}

int ceil_log2(int n) {
  int levels = 0;
  while ((1 << levels) < n) ++levels;
  return levels;
}

}  // namespace

CollectiveMachine::CollectiveMachine(const PlatformSpec& platform, std::map<Traffic, CollectiveOverride> overrides)
    : platform_(platform), overrides_(std::move(overrides)) {
  if (platform.xml_file.empty() && !platform.gpus.empty()) topology_.emplace(platform);
}

double CollectiveMachine::p2p_overhead_s(int src, int dst) const {
  if (ideal()) return 0;
  const NetworkCalibration& c = platform_.network;
  const bool same_node = platform_.gpus[src].node == platform_.gpus[dst].node;
  return same_node ? c.p2p_nvlink_latency_s : c.p2p_net_latency_s;
}

double CollectiveMachine::alltoall_overhead_s(int src, int dst) const {
  if (ideal()) return 0;
  const NetworkCalibration& c = platform_.network;
  return platform_.gpus[src].node == platform_.gpus[dst].node ? c.alltoall_nvlink_latency_s : c.alltoall_net_latency_s;
}

CollectiveMachine::GroupShape CollectiveMachine::shape_of(const std::vector<int>& gpus) const {
  GroupShape s;
  std::map<int, int> node_index;
  for (int pos = 0; pos < static_cast<int>(gpus.size()); ++pos) {
    auto [it, fresh] = node_index.try_emplace(platform_.gpus[gpus[pos]].node, static_cast<int>(s.nodes.size()));
    if (fresh) s.nodes.emplace_back();
    s.nodes[it->second].push_back(pos);
  }
  s.min_per_node = std::numeric_limits<int>::max();
  for (const auto& n : s.nodes) s.min_per_node = std::min(s.min_per_node, static_cast<int>(n.size()));
  for (const auto& n : s.nodes) s.uniform = s.uniform && static_cast<int>(n.size()) == s.min_per_node;
  return s;
}

// One channel per rail the group can use across nodes (capped by the calibration and the scenario); a one-node
// group's channels share every NVLink port, so they are one flow.
int CollectiveMachine::channels_for(const GroupShape& s, Traffic traffic) const {
  if (s.nodes.size() == 1 || !s.uniform) return 1;
  int c = std::min(platform_.network.max_channels, s.min_per_node);
  if (auto it = overrides_.find(traffic); it != overrides_.end() && it->second.channels > 0)
    c = std::min(c, it->second.channels);
  return std::max(1, c);
}

// NCCL's latency: base + per-step hardware latency over the algorithm's intra- and inter-node steps.
double CollectiveMachine::latency_s(CollectiveAlgorithm a, Protocol p, int steps, int inter_steps) const {
  const AlgorithmLatency& row = platform_.network.algorithms[std::min(int(a), kCalibratedAlgorithms - 1)];
  const int i = int(p);
  return row.base_s[i] + (steps - inter_steps) * row.nvlink_step_s[i] + inter_steps * row.net_step_s[i];
}

// The bus bandwidth of a group: its NVLink port rate, or across nodes the NICs of a node's ranks when lower.
double CollectiveMachine::bus_bw_Bps(const GroupShape& s) const {
  const NetworkCalibration& c = platform_.network;
  double bw = platform_.nvlink_bw_Bps * c.nvlink_bw_efficiency;
  if (s.nodes.size() > 1) bw = std::min(bw, s.min_per_node * platform_.nic_bw_Bps * c.nic_bw_efficiency);
  return bw;
}

std::optional<double> CollectiveMachine::model_time_s(CollectiveOp op, const std::vector<int>& gpus, double bytes,
                                                      CollectiveAlgorithm a, Protocol p, int channels) const {
  const GroupShape s = shape_of(gpus);
  const int n = static_cast<int>(gpus.size()), nodes = static_cast<int>(s.nodes.size());
  const double factor = platform_.network.protocol_bw_factor[int(p)];
  const bool ar = op == CollectiveOp::ALLREDUCE;
  const double buffer = op == CollectiveOp::ALLGATHER ? bytes * n : bytes;  // NCCL's nBytes
  const double bus = bus_bw_Bps(s) * std::min(1.0, double(channels) / std::max(1, channels_for(s, Traffic::NONE)));
  switch (a) {
    case CollectiveAlgorithm::RING: {
      const int steps = ar ? 2 * (n - 1) : n - 1, inter = ar ? 2 * (nodes - 1) : nodes - 1;
      return latency_s(a, p, steps, inter) + buffer / (bus * factor * n / steps);
    }
    case CollectiveAlgorithm::TREE: {  // NCCL: algbw = busbw * 0.92 * 0.5; all-reduce only
      if (!ar || nodes < 2) return std::nullopt;
      const int ppn = s.min_per_node;
      const AlgorithmLatency& row = platform_.network.algorithms[int(a)];
      const double lat = row.base_s[int(p)] + 2 * ((ppn - 1) * row.nvlink_step_s[int(p)] +
                                                   ceil_log2(nodes) * row.net_step_s[int(p)]);
      return lat + buffer / (bus * factor * 0.92 * 0.5);
    }
    case CollectiveAlgorithm::NVLS: {  // in-switch reduction: each port carries the buffer once each way
      if (!ar || nodes != 1 || !platform_.network.nvls || p != Protocol::SIMPLE) return std::nullopt;
      return latency_s(a, p, 1, 0) + buffer / (platform_.nvlink_bw_Bps * platform_.network.nvls_bw_efficiency);
    }
    case CollectiveAlgorithm::HIERARCHICAL: {
      if (op == CollectiveOp::REDUCE_SCATTER || nodes < 2 || !s.uniform) return std::nullopt;
      const int m = s.min_per_node;
      const double nvl = platform_.nvlink_bw_Bps * platform_.network.nvlink_bw_efficiency * factor;
      const double nic = platform_.nic_bw_Bps * platform_.network.nic_bw_efficiency * factor;
      const double per_rank = bytes;
      double t = 0;
      if (ar) {  // reduce-scatter in the node, all-reduce per rail across nodes, all-gather in the node
        t += latency_s(CollectiveAlgorithm::RING, p, m - 1, 0) + (m - 1.0) / m * per_rank / nvl;
        t += latency_s(CollectiveAlgorithm::RING, p, 2 * (nodes - 1), 2 * (nodes - 1)) +
             2.0 * (nodes - 1) / nodes * per_rank / m / nic;
        t += latency_s(CollectiveAlgorithm::RING, p, m - 1, 0) + (m - 1.0) / m * per_rank / nvl;
      } else {   // all-gather in the node, then across nodes per rail with the node's m blocks
        t += latency_s(CollectiveAlgorithm::RING, p, m - 1, 0) + (m - 1.0) * per_rank / nvl;
        t += latency_s(CollectiveAlgorithm::RING, p, nodes - 1, nodes - 1) + (nodes - 1.0) * m * per_rank / nic;
      }
      return t;
    }
  }
  return std::nullopt;
}

CollectiveChoice CollectiveMachine::choose(CollectiveOp op, const std::vector<int>& gpus, double bytes,
                                           Traffic traffic) const {
  const GroupShape s = shape_of(gpus);
  std::vector<int> per_node;
  for (const auto& n : s.nodes) per_node.push_back(static_cast<int>(n.size()));
  const ChoiceKey key{int(op), int(traffic), bytes, per_node};
  if (auto it = choices_.find(key); it != choices_.end()) return it->second;

  CollectiveOverride fixed;
  if (auto it = overrides_.find(traffic); it != overrides_.end()) fixed = it->second;
  // An XML platform's link rates are in its file, not in the spec: NCCL's model has nothing to compare, run rings.
  if (!topology_ && !fixed.algorithm) fixed.algorithm = CollectiveAlgorithm::RING;
  const int channels = channels_for(s, traffic);
  CollectiveChoice best;
  best.predicted_s = std::numeric_limits<double>::infinity();
  for (int a = 0; a <= int(CollectiveAlgorithm::HIERARCHICAL); ++a) {
    const auto algo = CollectiveAlgorithm(a);
    // auto follows NCCL's tuner, which has no hierarchical algorithm: that one runs only when asked for.
    if (!fixed.algorithm ? algo == CollectiveAlgorithm::HIERARCHICAL : *fixed.algorithm != algo) continue;
    for (int p = 0; p < kProtocols; ++p) {
      if (fixed.protocol && *fixed.protocol != Protocol(p)) continue;
      const auto t = model_time_s(op, gpus, bytes, algo, Protocol(p), channels);
      if (t && *t < best.predicted_s) best = {algo, Protocol(p), channels, 0, *t};
    }
  }
  if (!std::isfinite(best.predicted_s)) best = {CollectiveAlgorithm::RING, Protocol::SIMPLE, channels, 0,
                                                *model_time_s(op, gpus, bytes, CollectiveAlgorithm::RING,
                                                              Protocol::SIMPLE, channels)};
  return choices_[key] = best;
}

// A pipelined ring over `positions` (global GPU ids in ring order, node by node): each channel rotates every
// node's local order by its index, so the hop leaving a node uses that channel's rail.
std::vector<CollectiveMachine::Phase> CollectiveMachine::ring_phase(CollectiveOp op, const std::vector<int>& positions,
                                                                    double bytes, Protocol p, int channels, int steps,
                                                                    int inter_steps) const {
  const int n = static_cast<int>(positions.size());
  Phase phase;
  phase.latency_s = latency_s(CollectiveAlgorithm::RING, p, steps, inter_steps);
  phase.bw_factor = platform_.network.protocol_bw_factor[int(p)];
  if (n < 2) return {phase};
  const double hop_bytes = op == CollectiveOp::ALLREDUCE ? 2.0 * (n - 1) / n * bytes
                           : op == CollectiveOp::ALLGATHER ? (n - 1.0) * bytes
                                                           : (n - 1.0) / n * bytes;
  // Rank order per node, as `positions` lists them.
  std::vector<std::vector<int>> by_node;
  std::map<int, int> node_slot;
  for (int pos : positions) {
    const int node = platform_.gpus[pos].node;  // `positions` are global GPU ids here
    auto [it, fresh] = node_slot.try_emplace(node, static_cast<int>(by_node.size()));
    if (fresh) by_node.emplace_back();
    by_node[it->second].push_back(pos);
  }
  // Each GPU sends its channels' flows starting from the channel of its own local index: rotating every node's
  // GPUs by one then maps each GPU's k-th flow onto its neighbour's k-th (channel c becomes c + 1), so the
  // collective collapses under the TP rotation (workloads/rank_symmetry.hpp).
  std::map<int, int> local_index;
  for (const auto& local : by_node)
    for (std::size_t i = 0; i < local.size(); ++i) local_index[local[i]] = static_cast<int>(i);
  std::vector<std::pair<int, PlannedFlow>> ranked;  // (the flow's rank among its sender's, the flow)
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    for (const auto& local : by_node)
      for (std::size_t i = 0; i < local.size(); ++i) order.push_back(local[(i + c) % local.size()]);
    for (int i = 0; i < n; ++i)
      ranked.push_back({((c - local_index[order[i]]) % channels + channels) % channels,
                        {order[i], order[(i + 1) % n], hop_bytes / channels}});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, flow] : ranked) phase.flows.push_back(flow);
  return {phase};
}

RankTasks CollectiveMachine::run(CollectiveOp op, TaskGraph& g, const std::vector<int>& gpus, double bytes,
                                 const CollectiveTag& tag, const RankTasks& ready) const {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  if (const int offset = g.gpu_offset(); offset != 0) {  // plan on the GPUs the flows land on; emit them unshifted
    std::vector<int> shifted;
    for (int gpu : gpus) shifted.push_back(gpu + offset);
    g.set_gpu_offset(0);
    RankTasks done = run(op, g, shifted, bytes, tag, ready);
    g.set_gpu_offset(offset);
    return done;
  }
  const GroupShape s = shape_of(gpus);
  const CollectiveChoice c = choose(op, gpus, bytes, tag.traffic);
  const int nodes = static_cast<int>(s.nodes.size());
  const bool ar = op == CollectiveOp::ALLREDUCE;
  std::vector<Phase> phases;
  auto global = [&](const std::vector<int>& positions) {
    std::vector<int> ids;
    for (int p : positions) ids.push_back(gpus[p]);
    return ids;
  };
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;

  switch (c.algorithm) {
    case CollectiveAlgorithm::RING:
      phases = ring_phase(op, global(all), bytes, c.protocol, c.channels, ar ? 2 * (n - 1) : n - 1,
                          ar ? 2 * (nodes - 1) : nodes - 1);
      break;
    case CollectiveAlgorithm::NVLS: {  // every port carries the buffer once each way (emulated switch reduction)
      Phase ph;
      ph.latency_s = latency_s(c.algorithm, c.protocol, 1, 0);
      ph.bw_factor = platform_.network.nvls_bw_efficiency / platform_.network.nvlink_bw_efficiency;
      for (int r = 0; r < n; ++r)
        for (int k = 1; k < n; ++k) ph.flows.push_back({gpus[r], gpus[(r + k) % n], bytes / (n - 1)});
      phases.push_back(ph);
      break;
    }
    case CollectiveAlgorithm::TREE: {  // chain in each node, two complementary binary trees over the node heads
      Phase ph;
      const AlgorithmLatency& row = platform_.network.algorithms[int(c.algorithm)];
      const int i = int(c.protocol);
      ph.latency_s = row.base_s[i] + 2 * ((s.min_per_node - 1) * row.nvlink_step_s[i] +
                                          ceil_log2(nodes) * row.net_step_s[i]);
      ph.bw_factor = platform_.network.protocol_bw_factor[i];
      const double b = bytes / c.channels;
      for (int ch = 0; ch < c.channels; ++ch) {
        std::vector<int> heads;
        for (const auto& local : s.nodes) {
          const int m = static_cast<int>(local.size());
          for (int j = 0; j + 1 < m; ++j) {  // reduce up the chain, broadcast down
            const int parent = gpus[local[(j + ch) % m]], child = gpus[local[(j + 1 + ch) % m]];
            ph.flows.push_back({child, parent, b});
            ph.flows.push_back({parent, child, b});
          }
          heads.push_back(gpus[local[ch % m]]);
        }
        for (int t = 0; t < 2; ++t)
          for (int k = 1; k < nodes; ++k) {
            const int child = t == 0 ? k : nodes - 1 - k, parent = t == 0 ? (k - 1) / 2 : nodes - 1 - (k - 1) / 2;
            ph.flows.push_back({heads[child], heads[parent], b / 2});
            ph.flows.push_back({heads[parent], heads[child], b / 2});
          }
      }
      phases.push_back(ph);
      break;
    }
    case CollectiveAlgorithm::HIERARCHICAL: {
      const int m = s.min_per_node;
      auto intra = [&](CollectiveOp o, double b) {
        Phase merged;
        for (const auto& local : s.nodes) {
          Phase ph = ring_phase(o, global(local), b, c.protocol, 1, m - 1, 0).front();
          merged.latency_s = ph.latency_s, merged.bw_factor = ph.bw_factor;
          merged.flows.insert(merged.flows.end(), ph.flows.begin(), ph.flows.end());
        }
        return merged;
      };
      auto inter = [&](CollectiveOp o, double b) {
        Phase merged;
        for (int i = 0; i < m; ++i) {
          std::vector<int> rail;
          for (const auto& local : s.nodes) rail.push_back(local[i]);
          const int st = o == CollectiveOp::ALLREDUCE ? 2 * (nodes - 1) : nodes - 1;
          Phase ph = ring_phase(o, global(rail), b, c.protocol, 1, st, st).front();
          merged.latency_s = ph.latency_s, merged.bw_factor = ph.bw_factor;
          merged.flows.insert(merged.flows.end(), ph.flows.begin(), ph.flows.end());
        }
        return merged;
      };
      if (ar)
        phases = {intra(CollectiveOp::REDUCE_SCATTER, bytes), inter(CollectiveOp::ALLREDUCE, bytes / m),
                  intra(CollectiveOp::ALLGATHER, bytes / m)};
      else
        phases = {intra(CollectiveOp::ALLGATHER, bytes), inter(CollectiveOp::ALLGATHER, bytes * m)};
      break;
    }
  }
  return emit(g, gpus, phases, tag, ready);
}

// Adds each phase's flows; a phase starts on a pair of ranks once both finished the previous phase. Each flow pays
// the phase's calibrated latency before its bytes move (the route's wire latency then comes from the platform).
RankTasks CollectiveMachine::emit(TaskGraph& g, const std::vector<int>& gpus, const std::vector<Phase>& phases,
                                  const CollectiveTag& tag, const RankTasks& ready) const {
  std::map<int, int> position;
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i) position[gpus[i]] = i;
  RankTasks frontier = ready;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    const Phase& ph = phases[k];
    // Flows of this phase per directed link, for the rate ceilings.
    std::map<std::pair<int, bool>, int> on_link;
    if (topology_ && ph.bw_factor < 1)
      for (const auto& f : ph.flows)
        for (const auto& hop : topology_->route(f.from, f.to)) ++on_link[{hop.link, hop.up}];
    RankTasks next(gpus.size());
    std::vector<bool> active(gpus.size(), false);
    for (const auto& f : ph.flows) {
      if (f.bytes <= 0 || f.from == f.to) continue;
      const int a = position.at(f.from), b = position.at(f.to);
      const TaskId id = g.add_flow(f.from, f.to, f.bytes, tag.traffic, tag.name, tag.layer, static_cast<int>(k));
      // SimGrid 3.32 cannot cap a host-to-host flow's rate, so a protocol's (or NVLS's) bandwidth loss is paid as
      // time before the bytes move: the flow's uncontended transfer at its share of its bottleneck, times 1/f - 1.
      double slow_s = 0;
      if (topology_ && ph.bw_factor < 1) {
        double share_Bps = std::numeric_limits<double>::infinity();
        for (const auto& hop : topology_->route(f.from, f.to))
          share_Bps = std::min(share_Bps, topology_->links()[hop.link].bw_Bps / on_link[{hop.link, hop.up}]);
        slow_s = f.bytes / share_Bps * (1 / ph.bw_factor - 1);
      }
      g.set_flow_overhead(id, ph.latency_s + slow_s);
      g.depend_all(id, frontier[a]);
      g.depend_all(id, frontier[b]);
      next[a].push_back(id), next[b].push_back(id);
      active[a] = active[b] = true;
    }
    for (std::size_t r = 0; r < gpus.size(); ++r)
      if (active[r]) frontier[r] = std::move(next[r]);
  }
  return frontier;
}

namespace {
const CollectiveMachine* calibrated(const TaskGraph& g) {
  return g.machine() && !g.machine()->ideal() ? g.machine() : nullptr;
}
}  // namespace

RankTasks allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                    const RankTasks& ready) {
  if (const auto* m = calibrated(g)) return m->run(CollectiveOp::ALLREDUCE, g, gpus, bytes, tag, ready);
  return ring_allreduce(g, gpus, bytes, tag, ready);
}

RankTasks allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank, const CollectiveTag& tag,
                    const RankTasks& ready) {
  if (const auto* m = calibrated(g)) return m->run(CollectiveOp::ALLGATHER, g, gpus, bytes_per_rank, tag, ready);
  return ring_allgather(g, gpus, bytes_per_rank, tag, ready);
}

RankTasks reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready) {
  if (const auto* m = calibrated(g)) return m->run(CollectiveOp::REDUCE_SCATTER, g, gpus, bytes, tag, ready);
  return ring_reduce_scatter(g, gpus, bytes, tag, ready);
}

RankTasks alltoallv(TaskGraph& g, const std::vector<int>& gpus, const std::vector<std::vector<double>>& bytes,
                    const CollectiveTag& tag, const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1 || !calibrated(g)) return pairwise_alltoallv(g, gpus, bytes, tag, ready);
  std::vector<std::vector<StepMessage>> one_step(1);
  for (int r = 0; r < n; ++r)
    for (int k = 1; k < n; ++k)
      if (const int to = (r + k) % n; bytes[r][to] > 0) {
        const double overhead_s = g.machine()->alltoall_overhead_s(gpus[r] + g.gpu_offset(), gpus[to] + g.gpu_offset());
        one_step[0].push_back({r, to, bytes[r][to], overhead_s});
      }
  return run_steps(g, gpus, one_step, tag, ready);
}

RankTasks alltoall(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_pair, const CollectiveTag& tag,
                   const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  return alltoallv(g, gpus, std::vector<std::vector<double>>(n, std::vector<double>(n, bytes_per_pair)), tag, ready);
}

}  // namespace cpsim
