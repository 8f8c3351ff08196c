#include "sim/engine/memory_timeline.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace cpsim {

std::vector<MemoryTimeline> memory_timelines(const WorkloadInputs& in, const TaskGraph& g,
                                             const std::vector<MemoryBreakdown>& base,
                                             const std::vector<std::vector<LayerWindow>>& windows) {
  const bool train = in.run.phase == Phase::TRAIN, decode = in.run.phase == Phase::DECODE;
  std::map<LayerKinds, LayerMemory> by_kind;  // layer_memory depends on the kind only
  const std::size_t gpus = windows.empty() ? 0 : windows.front().size();
  std::vector<MemoryTimeline> out(gpus);
  for (std::size_t gpu = 0; gpu < gpus; ++gpu) {
    // (time, change): at equal times frees come first, so a layer that ends as the next begins reuses its memory.
    std::vector<std::pair<double, double>> changes;
    for (std::size_t l = 0; l < windows.size(); ++l) {
      const LayerWindow& w = windows[l][gpu];
      if (w.last < 0) continue;
      const LayerInfo& info = g.layers()[l];
      auto [it, fresh] = by_kind.try_emplace(info.kinds);
      if (fresh) it->second = layer_memory(in, info.kinds);
      const LayerMemory& m = it->second;
      const bool backward = info.backward;
      if (!train) {
        changes.push_back({w.first, m.working_bytes + (decode ? 0 : m.kv_bytes)});
        changes.push_back({w.last, -m.working_bytes});
      } else if (!backward) {
        changes.push_back({w.first, m.working_bytes});
        changes.push_back({w.last, m.kept_bytes - m.working_bytes});
      } else {  // the kept activations become the layer's working set again (recomputed where they were dropped)
        changes.push_back({w.first, m.working_bytes - m.kept_bytes});
        changes.push_back({w.last, -m.working_bytes});
      }
    }
    std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    MemoryTimeline& t = out[gpu];
    const MemoryBreakdown& b = base[gpu];
    double bytes = b.weights_bytes + b.gradients_bytes + b.optimizer_states_bytes + b.framework_reserve_bytes +
                   (decode ? b.kv_cache_bytes : 0);
    t.points.push_back({0, bytes});
    t.peak_bytes = bytes;
    for (const auto& [when, delta] : changes) {
      bytes += delta;
      if (t.points.back().first == when) t.points.back().second = bytes;
      else t.points.push_back({when, bytes});
      if (bytes > t.peak_bytes) t.peak_bytes = bytes, t.peak_t_s = when;
    }
  }
  return out;
}

}  // namespace cpsim
