#include "sim/report/pipeline_metrics.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "workloads/pipeline_schedule.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {

void add_pipeline_metrics(const Scenario& s, Metrics& m) {
  if (s.parallel.pp <= 1) return;
  const PipelinePlan plan = pipeline_plan(s.model, s.run, s.parallel);
  PipelineMetrics p;
  p.stages = plan.stages();
  p.virtual_stages = plan.virtual_stages();
  p.micro_batches = plan.micro_batches();
  p.schedule = kPipelineScheduleNames.name(s.parallel.pp_schedule);
  p.ideal_bubble_fraction = plan.ideal_bubble_fraction();
  // A pass's window: its layers' windows, joined. Key: (stage, backward, micro-batch, chunk).
  std::map<std::tuple<int, bool, int, int>, std::pair<double, double>> passes;
  for (const LayerMetrics& lm : m.layers) {
    const LayerPlace& place = lm.info.place;
    if (place.stage < 0 || lm.t_end_s < 0) continue;
    const auto key = std::tuple{place.stage, lm.info.backward, place.micro_batch, plan.chunk_of_layer(place.model_layer)};
    auto [it, fresh] = passes.try_emplace(key, lm.t_start_s, lm.t_end_s);
    if (!fresh) it->second = {std::min(it->second.first, lm.t_start_s), std::max(it->second.second, lm.t_end_s)};
  }
  std::vector<std::vector<std::pair<double, double>>> by_stage(plan.stages());
  for (const auto& [key, window] : passes) by_stage[std::get<0>(key)].push_back(window);
  const RankLayout layout(s.parallel);
  for (int stage = 0; stage < plan.stages(); ++stage) {
    std::vector<std::pair<double, double>>& w = by_stage[stage];
    std::sort(w.begin(), w.end());
    StageMetrics st;
    st.stage = stage;
    st.first_gpu = layout.stage_base(stage);
    st.layers = static_cast<int>(plan.stage_layers(stage).size());
    st.passes = static_cast<int>(w.size());
    double covered_until = 0;
    for (const auto& [from, to] : w) {  // the union of the pass windows
      if (to > covered_until) st.busy_s += to - std::max(from, covered_until), covered_until = to;
    }
    st.bubble_s = std::max(0.0, m.makespan_s - st.busy_s);
    for (const RankMetrics& r : m.ranks)
      if (r.pp_stage == stage) st.memory_peak_bytes = std::max(st.memory_peak_bytes, r.memory_peak_bytes);
    p.bubble_fraction = std::max(p.bubble_fraction, m.makespan_s > 0 ? st.bubble_s / m.makespan_s : 0.0);
    p.stage_metrics.push_back(st);
  }
  m.pipeline = p;
}

}  // namespace cpsim
