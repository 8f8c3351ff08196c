// Memory verdicts (workloads/memory.hpp): a GPU's need against its HBM, the overflow, the largest term, and
// run.on_oom. Oracles: byte sums written beside each check.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "sim/engine/memory_timeline.hpp"
#include "workloads/memory.hpp"

using namespace cpsim;

TEST_CASE("memory verdict: fits, overflow and the largest term", "[memory]") {
  MemoryBreakdown m;
  m.weights_bytes = 30e9;
  m.kv_cache_bytes = 50e9;
  m.activations_bytes = 10e9;
  const MemoryVerdict over = memory_verdict(m, 80e9);
  CHECK(over.need_bytes == 90e9);      // 30 + 50 + 10 GB
  CHECK_FALSE(over.fits);
  CHECK(over.overflow_bytes == 10e9);  // 90 - 80 GB
  CHECK(over.largest_term == "kv_cache");
  CHECK(over.largest_term_bytes == 50e9);
  const MemoryVerdict fits = memory_verdict(m, 90e9);  // exactly the capacity fits
  CHECK(fits.fits);
  CHECK(fits.overflow_bytes == 0);
}

TEST_CASE("memory verdict: run.on_oom error refuses a plan that does not fit, located at the key", "[memory]") {
  // Llama-3-8B at 32K on CP4 fits an 80 GB H100; at 8M tokens each GPU caches 2M tokens of KV for 32 layers:
  // 32 x 2,097,152 x 2 x 1024 x 2 B = 256 GiB, the largest term, past 80 GB = 74.51 GiB.
  const Scenario ok = test::scenario_from(test::kSmallScenario, {"run.on_oom=error"});
  CHECK(memory_verdict(prefill_memory(test::inputs_of(ok)), ok.platform.gpu.hbm_bytes).fits);
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"run.on_oom=error", "run.seq_len=8M"}),
                    Catch::StartsWith("--set:1:1: run.on_oom: a GPU needs") &&
                        Catch::Contains("of 74.51 GiB HBM") && Catch::Contains("largest term: kv_cache 256.00 GiB"));
  // warn (the default) loads the same plan; the summary flags it.
  const Scenario warned = test::scenario_from(test::kSmallScenario, {"run.seq_len=8M"});
  CHECK_FALSE(memory_verdict(prefill_memory(test::inputs_of(warned)), warned.platform.gpu.hbm_bytes).fits);
}

TEST_CASE("memory verdict: Llama-3-70B training at 256K on 32 H100s fits with full recomputation and ZeRO-1",
          "[memory][train]") {
  // scenarios/train-70b-256k-memory.yaml: CP4 x TP8, sequence parallelism, bf16. Hand derivation per GPU:
  //   params per layer / tp = (8192 x (8192 + 2 x 1024) + 8192 x 8192 + 3 x 8192 x 28672) / 8 = 106,954,752
  //   params = 80 x 106,954,752 + 2 x 128,256 x 8192 / 8 (embeddings) = 8,819,048,448
  //   weights = gradients = 2 B x params = 17,638,096,896
  //   optimizer states, ZeRO-1 over dp x cp = 4: 12 B x params / 4 = 26,457,145,344
  //   tokens per rank t = 262,144 / 4 = 65,536; residual with SP d / tp = 1024; q_w = 1024, d_kv_gpu = 128,
  //   ffn / tp = 3584. Full recomputation keeps each layer's input, t x 2 B x 1024 = 134,217,728; while the first
  //   backward layer recomputes, the 79 other inputs (10,603,200,512) sit beside its working set (which holds its
  //   own input): t x 2 B x (2 x 1024 + 1024 + 2 x 128 + 1024 + 2 x 3584) = 1,509,949,440.
  //   communication buffers: the ring backward double-buffers K, V and dK, dV hops, 4 blocks of
  //   t x 2 x d_kv_gpu x 2 B = 33,554,432: 134,217,728
  //   + the framework reserve, 768 MiB = 805,306,368 (run.memory_reserve)
  //   total = 2 x 17,638,096,896 + 26,457,145,344 + 10,603,200,512 + 1,509,949,440 + 134,217,728 + 805,306,368
  //         = 74,786,013,184 <= 80 GB.
  const auto load = [](std::vector<std::string> sets) {
    return test::scenario_from(R"(
name: t
platform: {preset: hgx-h100, nodes: 4}
model: models/llama3-70b.yaml
run: {phase: train, seq_len: 256K}
parallel: {cp: 4, tp: 8, sequence_parallel: true}
)", sets);
  };
  const Scenario tuned = load({"run.recompute=full", "parallel.zero=1"});
  const MemoryBreakdown m = prefill_memory(test::inputs_of(tuned));
  CHECK(m.weights_bytes == 17638096896.0);
  CHECK(m.gradients_bytes == 17638096896.0);
  CHECK(m.optimizer_states_bytes == 26457145344.0);
  CHECK(m.activations_bytes == 10603200512.0 + 1509949440.0);
  CHECK(m.comm_buffers_bytes == 4 * 33554432.0);
  CHECK(m.framework_reserve_bytes == 805306368.0);
  CHECK(m.total_bytes() == 74786013184.0);
  CHECK(memory_verdict(m, tuned.platform.gpu.hbm_bytes).fits);
  // As written (no recomputation, no ZeRO): 80 layers' activations, one layer's buffers, 12 B x params of Adam
  // states; activations largest.
  const MemoryVerdict plain = memory_verdict(prefill_memory(test::inputs_of(load({}))), 80e9);
  CHECK_FALSE(plain.fits);
  CHECK(plain.need_bytes == 2 * 17638096896.0 + 12 * 8819048448.0 + 80 * 1509949440.0 + 4 * 33554432.0 + 805306368.0);
  CHECK(plain.largest_term == "activations");
  // ZeRO-2 also shards gradients, ZeRO-3 weights (plus the largest layer, gathered: 2 B x 106,954,752).
  const MemoryBreakdown z3 = prefill_memory(test::inputs_of(load({"parallel.zero=3"})));
  CHECK(z3.gradients_bytes == 17638096896.0 / 4);
  CHECK(z3.weights_bytes == 17638096896.0 / 4 + 2 * 106954752.0);
  // Selective keeps 2 x 1024 + 1024 + 2 x 128 + 1024 = 4352 per token and layer, plus one layer's FFN
  // intermediates (2 x 3584); the ring buffers are the comm_buffers term.
  const MemoryBreakdown sel = prefill_memory(test::inputs_of(load({"run.recompute=selective"})));
  CHECK(sel.activations_bytes == 65536.0 * 2 * (4352.0 * 80 + 7168));
}

TEST_CASE("memory verdict: recomputation and ZeRO are training settings", "[memory]") {
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"run.recompute=full"}),
                    "--set:1:1: run.recompute: activation recomputation applies to training (run.phase: train)");
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"parallel.zero=1"}),
                    "--set:1:1: parallel.zero: ZeRO shards training state (run.phase: train)");
}

TEST_CASE("memory timeline: KV stays, working sets come and go, micro-batches overlap", "[memory][timeline]") {
  // Llama-3-8B prefill, 2 layers on one GPU: held = weights + reserve; layer l adds kv + w at its first task and frees w
  // at its last. Windows [0, 1] and [1, 2]: at t = 1 the first layer's w is freed before the second's is taken, so
  // the peak is weights + 2 kv + w (= the closed form), reached at t = 1.
  const Scenario s = test::scenario_from(test::kSmallScenario, {"model.layers=2"});
  const WorkloadInputs in = test::inputs_of(s);
  const MemoryBreakdown base = prefill_memory(in);
  const LayerMemory l = layer_memory(in, {AttentionKind::DENSE});
  TaskGraph g(1);
  g.add_layer({AttentionKind::DENSE}, {CpAlgorithm::RING});
  g.add_layer({AttentionKind::DENSE}, {CpAlgorithm::RING});
  const auto sequential = memory_timelines(in, g, {base}, {{{0, 1}}, {{1, 2}}});
  REQUIRE(sequential.size() == 1);
  const double held = base.weights_bytes + base.framework_reserve_bytes;
  CHECK(sequential[0].peak_bytes == Approx(held + 2 * l.kv_bytes + l.working_bytes));
  CHECK(sequential[0].peak_bytes == Approx(base.total_bytes()));
  CHECK(sequential[0].peak_t_s == 1);
  CHECK(sequential[0].points.back().second == Approx(held + 2 * l.kv_bytes));  // after the last layer
  // Two micro-batches' layers at once (windows [0, 2] and [1, 3]): both working sets live in [1, 2].
  const auto overlapped = memory_timelines(in, g, {base}, {{{0, 2}}, {{1, 3}}});
  CHECK(overlapped[0].peak_bytes == Approx(held + 2 * l.kv_bytes + 2 * l.working_bytes));
}

TEST_CASE("memory verdict: communication buffers follow the CP algorithm", "[memory]") {
  // Llama-3-8B at 32K on cp 4, bf16: t = 8192 tokens per rank, d_kv = 8 heads x 128 = 1024, c_kv = 2 x 1024 x 2 B =
  // 4096 B per token. Oracles by hand (docs/model.md, "Communication buffers"):
  //   ring: two K, V blocks (double buffering), 2 x 8192 x 4096 = 67,108,864
  //   allgather: the whole gathered K, V that arrives, (N-1)/N x 32768 x 4096 = 100,663,296
  //   ulysses (u = 4, h_q = 32, h_kv = 8): the all-to-all receive buffers, (u-1) x t x d x s x (2 h_q/u + 2 h_kv/u)
  //     = 3 x 8192 x 128 x 2 x (16 + 4) = 125,829,120
  //   usp (u = 2, 2 rings): the all-to-all's 1 x 8192 x 128 x 2 x (32 + 8) = 83,886,080 plus two ring blocks of
  //     S/2 tokens x 2 x (8/2) heads x 128 x 2 B = 33,554,432: 150,994,944
  //   cp 1: none.
  const auto buffers = [](std::vector<std::string> sets) {
    return prefill_memory(test::inputs_of(test::scenario_from(test::kSmallScenario, sets))).comm_buffers_bytes;
  };
  CHECK(buffers({}) == 67108864.0);
  CHECK(buffers({"cp.dense.algorithm=allgather"}) == 100663296.0);
  CHECK(buffers({"cp.dense.algorithm=ulysses"}) == 125829120.0);
  CHECK(buffers({"cp.dense.algorithm=usp", "cp.dense.ulysses_degree=2"}) == 150994944.0);
  CHECK(buffers({"parallel.cp=1"}) == 0.0);
  // The term is in the total, and the timeline's working set of a layer holds it too (peak = closed form for one
  // micro-batch).
  const Scenario s = test::scenario_from(test::kSmallScenario, {"cp.dense.algorithm=allgather"});
  const MemoryBreakdown m = prefill_memory(test::inputs_of(s));
  CHECK(m.total_bytes() == Approx(m.weights_bytes + m.kv_cache_bytes + m.activations_bytes + 100663296.0 +
                                  m.framework_reserve_bytes));
  CHECK(layer_memory(test::inputs_of(s), {AttentionKind::DENSE}).comm_bytes == 100663296.0);
}
