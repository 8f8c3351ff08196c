// Pipeline parallelism (parallel.pp, docs/model.md "Pipeline stages"): which model layers each stage holds and the
// order in which each stage runs its micro-batches' forward and backward passes. Pure: no graph, no engine.
//
// The model's L layers are cut into pp * v chunks of L / (pp * v) consecutive layers (v = parallel.pp_virtual_stages,
// 1 unless interleaved); chunk k runs on stage k mod pp, so stage s holds chunks s, pp + s, ... (Megatron-LM's
// interleaved placement; v = 1: stage s holds layers [s L/pp, (s+1) L/pp)). Schedules, per stage, as Megatron-LM's
// schedules.py orders them:
//   1f1b:        min(pp - s - 1, M) warm-up forwards, then one forward and one backward alternately, then the
//                remaining backwards (PipeDream-Flush); at most pp - s micro-batches' activations are kept.
//   interleaved: the same over M * v (micro-batch, chunk) passes, forwards in groups of pp micro-batches per chunk;
//                warm-up (pp - s - 1) * 2 + (v - 1) * pp; needs M divisible by pp.
//   gpipe:       every forward, then every backward (last micro-batch first); all M micro-batches are kept.
// Inference (prefill) runs the forward passes only, in the schedule's forward order.
#pragma once
#include <string>
#include <vector>

#include "workloads/model.hpp"

namespace cpsim {

struct PipelinePass {
  bool backward = false;
  int micro_batch = 0;
  int chunk = 0;  // model chunk (0 .. pp * v - 1), the layers [chunk * L/(pp v), (chunk + 1) * L/(pp v))
};

class PipelinePlan {
 public:
  PipelinePlan(int layers, int stages, int virtual_stages, int micro_batches, PipelineSchedule schedule,
               bool training);
  int stages() const { return stages_; }
  int virtual_stages() const { return virtual_stages_; }
  int micro_batches() const { return micro_batches_; }
  int chunks() const { return stages_ * virtual_stages_; }
  int layers_per_chunk() const { return layers_ / chunks(); }
  int stage_of_chunk(int chunk) const { return chunk % stages_; }
  int chunk_of_layer(int layer) const { return layer / layers_per_chunk(); }
  int stage_of_layer(int layer) const { return stage_of_chunk(chunk_of_layer(layer)); }
  int first_layer(int chunk) const { return chunk * layers_per_chunk(); }
  std::vector<int> stage_layers(int stage) const;  // the model layers stage `stage` holds, ascending
  // Stage `stage`'s passes in the order its GPUs run them.
  const std::vector<PipelinePass>& passes(int stage) const { return passes_[stage]; }
  // The most forward passes a stage runs before their backward (the activations it keeps at its peak), in chunks.
  int max_chunks_in_flight(int stage) const;
  // The schedule's ideal bubble, as a share of the step: (pp - 1) / (v * M + pp - 1) (Narayanan et al., SC'21,
  // arXiv:2104.04473, section 2.2: bubble time / ideal time = (p - 1) / (v m)).
  double ideal_bubble_fraction() const;

 private:
  int layers_, stages_, virtual_stages_, micro_batches_;
  std::vector<std::vector<PipelinePass>> passes_;
};

// The plan of a scenario's run (pp = 1: one stage holding every layer).
PipelinePlan pipeline_plan(const ModelSpec& model, const RunSpec& run, const ParallelSpec& parallel);

}  // namespace cpsim
