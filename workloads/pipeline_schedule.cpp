#include "workloads/pipeline_schedule.hpp"

#include <algorithm>

namespace cpsim {

PipelinePlan::PipelinePlan(int layers, int stages, int virtual_stages, int micro_batches, PipelineSchedule schedule,
                           bool training)
    : layers_(layers), stages_(stages), virtual_stages_(virtual_stages), micro_batches_(micro_batches),
      passes_(stages) {
  const int p = stages, v = virtual_stages, m = micro_batches, total = m * v;
  for (int s = 0; s < p; ++s) {
    std::vector<PipelinePass>& out = passes_[s];
    // The k-th forward (backward) pass of the stage, in Megatron-LM's interleaved order: groups of p micro-batches
    // per chunk, chunks ascending forward and descending backward. With v = 1 it is micro-batch k on chunk s.
    auto forward = [&](int k) {
      const int group = k / (p * v), in_group = k % (p * v);
      return PipelinePass{false, group * p + in_group % p, (in_group / p) * p + s};
    };
    auto backward = [&](int k) {
      if (v == 1) return PipelinePass{true, k, s};
      const int group = k / (p * v), in_group = k % (p * v);
      return PipelinePass{true, group * p + in_group % p, (v - 1 - in_group / p) * p + s};
    };
    if (!training) {
      for (int k = 0; k < total; ++k) out.push_back(v == 1 ? PipelinePass{false, k, s} : forward(k));
      continue;
    }
    if (schedule == PipelineSchedule::GPIPE) {
      for (int k = 0; k < m; ++k) out.push_back({false, k, s});
      for (int k = m - 1; k >= 0; --k) out.push_back({true, k, s});
      continue;
    }
    int warmup = v == 1 ? std::min(p - s - 1, m) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
    if (v > 1 && m == p) warmup = total;  // Megatron-LM: every forward first when M = pp
    for (int k = 0; k < warmup; ++k) out.push_back(v == 1 ? PipelinePass{false, k, s} : forward(k));
    for (int k = 0; k < total - warmup; ++k) {
      out.push_back(v == 1 ? PipelinePass{false, warmup + k, s} : forward(warmup + k));
      out.push_back(backward(k));
    }
    for (int k = total - warmup; k < total; ++k) out.push_back(backward(k));
  }
}

std::vector<int> PipelinePlan::stage_layers(int stage) const {
  std::vector<int> out;
  for (int c = stage; c < chunks(); c += stages_)
    for (int l = first_layer(c); l < first_layer(c) + layers_per_chunk(); ++l) out.push_back(l);
  return out;
}

int PipelinePlan::max_chunks_in_flight(int stage) const {
  int live = 0, peak = 0;
  for (const PipelinePass& pass : passes_[stage]) peak = std::max(peak, live += pass.backward ? -1 : 1);
  return peak;
}

double PipelinePlan::ideal_bubble_fraction() const {
  return double(stages_ - 1) / (double(virtual_stages_) * micro_batches_ + stages_ - 1);
}

PipelinePlan pipeline_plan(const ModelSpec& model, const RunSpec& run, const ParallelSpec& parallel) {
  return {model.layers, parallel.pp, parallel.pp_virtual_stages, parallel.pp > 1 ? run.micro_batches : 1,
          parallel.pp_schedule, run.phase == Phase::TRAIN};
}

}  // namespace cpsim
