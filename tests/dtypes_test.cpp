// run.dtypes: per-operation dtypes, each defaulting to run.dtype. Oracles: byte counts derived beside each check.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/memory.hpp"

using namespace cpsim;

TEST_CASE("dtypes: every operation defaults to run.dtype", "[dtypes]") {
  const Scenario s = test::scenario_from(test::kSmallScenario, {"run.dtype=fp16"});
  const OpDtypes& d = s.run.dtypes;
  for (Dtype x : {d.projections, d.ffn, d.attention, d.kv_cache, d.activations}) CHECK(x == Dtype::FP16);
}

TEST_CASE("dtypes: FP8 FFN weights halve the FFN's share of the weights only", "[dtypes][memory]") {
  // Llama-3-8B, tp 1: per layer, projections d(q_w + 2 d_kv) + q_w d = 4096 * 6144 + 4096 * 4096 params in bf16
  // (2 B), the SwiGLU 3 * 4096 * 14336 params in fp8 (1 B); embeddings 2 * 128256 * 4096 in bf16.
  const Scenario s = test::scenario_from(test::kSmallScenario, {"run.dtypes.ffn=fp8"});
  const MemoryBreakdown m = prefill_memory(test::inputs_of(s));
  const double proj = 4096.0 * 6144 + 4096.0 * 4096, ffn = 3.0 * 4096 * 14336, embed = 2.0 * 128256 * 4096;
  CHECK(m.weights_bytes == Approx(32 * (proj * 2 + ffn * 1) + embed * 2).epsilon(1e-12));
  // KV cache unchanged: 32 layers x T = 8192 x 2 x d_kv = 1024 x 2 B.
  CHECK(m.kv_cache_bytes == 32.0 * 8192 * 2 * 1024 * 2);
}

TEST_CASE("dtypes: an FP8 KV cache halves the KV cache and the ring's KV bytes", "[dtypes][memory]") {
  const Scenario s = test::scenario_from(test::kSmallScenario, {"run.dtypes.kv_cache=fp8"});
  CHECK(prefill_memory(test::inputs_of(s)).kv_cache_bytes == 32.0 * 8192 * 2 * 1024 * 1);
  // Ring: N-1 = 3 blocks of T = 8192 tokens x 2 x d_kv = 1024 x 1 B arrive at every rank.
  const TaskGraph g = generate_workload(test::inputs_of(s), s.platform.gpu_count());
  double ring_bytes_into_0 = 0;
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::FLOW && t.peer == 0 && t.layer == 0 && g.name(t.name) == "ring kv") ring_bytes_into_0 += t.bytes;
  CHECK(ring_bytes_into_0 == 3.0 * 8192 * 2 * 1024 * 1);
}

TEST_CASE("dtypes: activations set the TP all-reduce payload", "[dtypes][tp]") {
  // TP 2, CP 2: T = 16384 tokens, the attention all-reduce moves T x d_model x s; a ring all-reduce of 2 ranks sends
  // bytes/2 per step, 2 steps: each GPU sends T * 4096 * s in total, s = 4 (fp32) here.
  const Scenario s =
      test::scenario_from(test::kSmallScenario, {"parallel.cp=2", "parallel.tp=2", "run.dtypes.activations=fp32"});
  const TaskGraph g = generate_workload(test::inputs_of(s), s.platform.gpu_count());
  double sent = 0;
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::FLOW && t.gpu == 0 && t.layer == 0 && g.name(t.name) == "tp allreduce attn") sent += t.bytes;
  CHECK(sent == 16384.0 * 4096 * 4);
}
