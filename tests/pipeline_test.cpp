// Pipeline stages (parallel.pp, workloads/pipeline_schedule.hpp): the schedules' order, the prefill pipeline's
// makespan and P2P bytes against the pipeline recurrence, 1F1B's activation memory per stage, and the seed's
// CP=8 + PP=4 example (cp-overview.md: "each GPU holds 1/8 of the sequence x 15 layers").
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/memory.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/rank_layout.hpp"

using namespace cpsim;
using Catch::WithinRel;

namespace {

std::string passes_text(const std::vector<PipelinePass>& passes) {
  std::string out;
  for (const PipelinePass& p : passes) out += (p.backward ? "B" : "F") + std::to_string(p.micro_batch) + "." + std::to_string(p.chunk) + " ";
  return out;
}

}  // namespace

TEST_CASE("pipeline schedules: Megatron-LM's 1F1B, interleaved and GPipe orders", "[pipeline]") {
  // Oracle: Megatron-LM schedules.py. 1F1B, 4 stages, 6 micro-batches: stage s warms up with 3 - s forwards.
  const PipelinePlan f1b(8, 4, 1, 6, PipelineSchedule::ONE_F_ONE_B, true);
  CHECK(passes_text(f1b.passes(0)) == "F0.0 F1.0 F2.0 F3.0 B0.0 F4.0 B1.0 F5.0 B2.0 B3.0 B4.0 B5.0 ");
  CHECK(passes_text(f1b.passes(3)) == "F0.3 B0.3 F1.3 B1.3 F2.3 B2.3 F3.3 B3.3 F4.3 B4.3 F5.3 B5.3 ");
  for (int s = 0; s < 4; ++s) CHECK(f1b.max_chunks_in_flight(s) == 4 - s);  // min(pp - s, M)
  CHECK(f1b.stage_layers(1) == std::vector<int>{2, 3});
  CHECK_THAT(f1b.ideal_bubble_fraction(), WithinRel(3.0 / 9, 1e-12));  // (p - 1) / (m + p - 1)

  // Interleaved, 2 stages x 2 chunks, 4 micro-batches: stage 0 holds chunks 0 and 2; warm-up (2-0-1)*2 + (2-1)*2 = 4
  // forwards in groups of pp micro-batches per chunk, then 1F1B over (micro-batch, chunk), chunks descending backward.
  const PipelinePlan il(8, 2, 2, 4, PipelineSchedule::INTERLEAVED, true);
  CHECK(passes_text(il.passes(0)) ==
        "F0.0 F1.0 F0.2 F1.2 F2.0 B0.2 F3.0 B1.2 F2.2 B0.0 F3.2 B1.0 B2.2 B3.2 B2.0 B3.0 ");
  CHECK(il.stage_layers(0) == std::vector<int>{0, 1, 4, 5});
  CHECK_THAT(il.ideal_bubble_fraction(), WithinRel(1.0 / 9, 1e-12));  // (p - 1) / (v m + p - 1)

  const PipelinePlan gpipe(4, 2, 1, 3, PipelineSchedule::GPIPE, true);
  CHECK(passes_text(gpipe.passes(1)) == "F0.1 F1.1 F2.1 B2.1 B1.1 B0.1 ");
  CHECK(gpipe.max_chunks_in_flight(1) == 3);  // every micro-batch kept
  const PipelinePlan prefill(4, 2, 1, 3, PipelineSchedule::ONE_F_ONE_B, false);
  CHECK(passes_text(prefill.passes(1)) == "F0.1 F1.1 F2.1 ");
}

TEST_CASE("pipeline prefill: makespan = (M + P - 1) t_pass + (P - 1) t_p2p, P2P bytes exact", "[pipeline]") {
  // 4 stages of 2 dense layers, one GPU each (cp = tp = 1: a pass is compute only), 3 micro-batches.
  const Scenario s = test::scenario_from(test::kSmallScenario, {"parallel.cp=1", "parallel.pp=4", "model.layers=8",
                                                                "run.micro_batches=3"});
  const test::Run r = test::simulate(s);
  double stage0_compute_s = 0;
  int p2p = 0;
  double p2p_s = -1;
  for (std::size_t i = 0; i < r.graph.task_count(); ++i) {
    const Task& t = r.graph.task(static_cast<TaskId>(i));
    if (t.kind == TaskKind::COMPUTE && t.gpu == 0) stage0_compute_s += t.duration_s;
    if (t.kind != TaskKind::FLOW) continue;
    REQUIRE(t.traffic == Traffic::PP);
    CHECK(t.peer == t.gpu + 1);  // stage s's GPU to stage s+1's
    // Oracle: T x d_model activations in bf16 = 32768 * 4096 * 2 bytes per micro-batch and stage boundary.
    CHECK(t.bytes == 32768.0 * 4096 * 2);
    const double d = r.result.finish_s[i] - r.result.start_s[i];
    if (p2p_s < 0) p2p_s = d;
    CHECK_THAT(d, WithinRel(p2p_s, 1e-12));  // uncontended: every transfer alike
    ++p2p;
  }
  CHECK(p2p == 3 * 3);  // (P - 1) boundaries x M micro-batches
  const double pass_s = stage0_compute_s / 3;
  // Oracle: stage s finishes micro-batch k at (k + 1 + s) t_pass + s t_p2p.
  CHECK_THAT(r.metrics.makespan_s, WithinRel((3 + 4 - 1) * pass_s + 3 * p2p_s, 1e-9));
  REQUIRE(r.metrics.pipeline);
  CHECK(r.metrics.pipeline->stage_metrics.size() == 4);
  // Stage 0 waits only at the end: bubble = makespan - M t_pass (its passes run back to back).
  CHECK_THAT(r.metrics.pipeline->stage_metrics[0].bubble_s, WithinRel(r.metrics.makespan_s - 3 * pass_s, 1e-9));
}

TEST_CASE("pipeline training: the graph runs 1F1B's order; stage s keeps min(pp - s, M) micro-batches", "[pipeline]") {
  const Scenario s = test::scenario_from(test::kSmallScenario, {"run.phase=train", "parallel.cp=2", "parallel.pp=4",
                                                                "model.layers=8", "run.micro_batches=6"});
  const test::Run r = test::simulate(s);
  const PipelinePlan plan = pipeline_plan(s.model, s.run, s.parallel);
  const RankLayout layout(s.parallel);
  for (int stage = 0; stage < 4; ++stage) {
    // The passes in the order the stage's first GPU runs its kernels (consecutive kernels of one pass joined).
    std::vector<PipelinePass> ran;
    for (const Task& t : r.graph.all_tasks()) {
      if (t.kind != TaskKind::COMPUTE || t.gpu != layout.stage_base(stage)) continue;
      const LayerInfo& info = r.graph.layers()[t.layer];
      const PipelinePass p{info.backward, info.place.micro_batch, plan.chunk_of_layer(info.place.model_layer)};
      if (ran.empty() || ran.back().backward != p.backward || ran.back().micro_batch != p.micro_batch) ran.push_back(p);
    }
    CHECK(passes_text(ran) == passes_text(plan.passes(stage)));

    // Oracle (docs/model.md, recompute none): each kept layer holds its whole working set, and the stage keeps
    // its 2 layers for each of the min(4 - s, 6) micro-batches in flight.
    const WorkloadInputs in = test::inputs_of(s);
    const double working = layer_memory(in, {AttentionKind::DENSE}).working_bytes;
    const MemoryBreakdown m = stage_memory(in, stage);
    CHECK_THAT(m.activations_bytes, WithinRel(working * 2 * (4 - stage), 1e-12));
    // The timeline (tasks as they ran) reaches the same peak.
    CHECK_THAT(r.metrics.ranks[layout.stage_base(stage)].memory_peak_bytes, WithinRel(m.total_bytes(), 1e-12));
  }
  // Gradients flow back: one P2P per boundary, micro-batch and GPU in each direction (cp = 2 GPUs per stage).
  int activations = 0, gradients = 0;
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::FLOW && t.traffic == Traffic::PP)
      ++(r.graph.name(t.name) == "pp send gradients" ? gradients : activations);
  CHECK(activations == 3 * 6 * 2);
  CHECK(gradients == 3 * 6 * 2);
  // Oracle: (p - 1) / (m + p - 1) = 3/9 with equal stages; P2P and CP transfers add a little.
  REQUIRE(r.metrics.pipeline);
  CHECK_THAT(r.metrics.pipeline->bubble_fraction, WithinRel(3.0 / 9, 0.01));
}

TEST_CASE("pipeline: the seed's CP=8 + PP=4 at 1M holds 1/8 of the sequence x 15 layers per GPU", "[pipeline]") {
  const Scenario s = load_scenario(std::string(CPSIM_SOURCE_DIR) + "/scenarios/pp4-cp8-1m.yaml", {});
  const test::Run r = test::simulate(s);
  REQUIRE(r.metrics.ranks.size() == 32);
  for (const RankMetrics& rank : r.metrics.ranks) {
    CHECK(rank.pp_stage == rank.gpu / 8);  // one stage per node
    // Oracle: 4 micro-batches x (2^20 / 8 tokens) x 15 layers x 2 (K, V) x 1024 (8 KV heads of 128) x 2 bytes.
    CHECK(rank.memory.kv_cache_bytes == 4.0 * (1 << 20) / 8 * 15 * 2 * 1024 * 2);
  }
  REQUIRE(r.metrics.pipeline);
  for (const StageMetrics& st : r.metrics.pipeline->stage_metrics) CHECK(st.layers == 15);
  // Four requests fill a 4-stage pipeline: (p - 1) / (m + p - 1) = 3/7 idle, as the ideal schedule.
  CHECK_THAT(r.metrics.pipeline->bubble_fraction, WithinRel(3.0 / 7, 0.01));
}

TEST_CASE("pipeline: bad plans are located errors", "[pipeline][errors]") {
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"parallel.pp=3", "parallel.cp=2"}),
                    Catch::Contains(
                        "parallel.pp: the model's 32 layers must split evenly into pp x pp_virtual_stages = 3 chunks"));
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"parallel.pp=2", "parallel.pp_schedule=interleaved",
                                                               "run.phase=train", "run.micro_batches=3"}),
                    Catch::Contains("run.micro_batches: the interleaved schedule runs micro-batches "
                                                       "in groups of pp (2): got 3"));
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"parallel.pp_schedule=gpipe"}),
                    Catch::Contains("parallel.pp_schedule: a pipeline schedule needs stages"));
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"platform.nodes=2", "parallel.pp=2", "parallel.cp=3",
                                                               "cp.dense.partition=contiguous"}),
                    Catch::Contains("must fill whole 8-GPU nodes or divide one"));
}
