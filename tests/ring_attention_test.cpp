// Ring attention (pass-KV) prefill: bytes per rank equal the seed's formula, and on an uncontended platform one
// layer's time equals the closed form derived by hand below.
#include <algorithm>
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/layer_stack.hpp"
#include "workloads/attention/partition.hpp"

using namespace cpsim;

TEST_CASE("ring: per-rank CP bytes per layer equal (N-1)/N * S * 2 * d_kv * s", "[ring][volume]") {
  // Oracle: cp-overview 7.2 / heterogeneous-attention-cp: M_ring = (N-1)/N * S * 2 * d_kv * s_dtype per rank.
  // Llama-3-8B: d_kv = 8 KV heads * 128 = 1024; BF16 s = 2.
  for (int n : {2, 4, 8}) {
    const Scenario s = test::scenario_from(test::kSmallScenario, {"parallel.cp=" + std::to_string(n),
                                                                  "run.seq_len=128K", "model.layers=2"});
    const TaskGraph g = generate_layer_stack(test::inputs_of(s), s.platform.gpu_count());
    std::vector<std::vector<double>> received(2, std::vector<double>(n, 0));
    for (const Task& t : g.all_tasks())
      if (t.kind == TaskKind::FLOW && t.traffic == Traffic::CP) received[t.layer][t.peer] += t.bytes;
    const double expected = double(n - 1) / n * 131072.0 * 2 * 1024 * 2;
    for (const auto& layer : received)
      for (double b : layer) CHECK(b == expected);
    // N = 8, S = 128K: 7/8 * 131072 * 4096 B = 469762048 B = 448 MiB.
    if (n == 8) CHECK(expected == 469762048.0);
  }
}

TEST_CASE("ring: N-1 transfer steps and N attention steps per rank", "[ring]") {
  const Scenario s = test::scenario_from(test::kSmallScenario, {"model.layers=1"});
  const TaskGraph g = generate_layer_stack(test::inputs_of(s), s.platform.gpu_count());
  std::vector<int> sent(4, 0), attn(4, 0);
  for (const Task& t : g.all_tasks()) {
    if (t.kind == TaskKind::FLOW) ++sent[t.gpu];
    if (t.kind == TaskKind::COMPUTE && g.name(t.name) == "attention") ++attn[t.gpu];
  }
  for (int r = 0; r < 4; ++r) {
    CHECK(sent[r] == 3);  // N-1 = 3 KV hops
    CHECK(attn[r] == 4);  // zigzag: every step has causal work
  }
}

TEST_CASE("partition: causal pairs per scheme", "[partition]") {
  // Oracle: counting by hand. S = 16, N = 2.
  // contiguous: rank 1 vs rank 0 full 8*8 = 64; diagonal 8*9/2 = 36; rank 0 vs rank 1 masked.
  CHECK(causal_pairs(Partition::CONTIGUOUS, 16, 2, 1, 0) == 64);
  CHECK(causal_pairs(Partition::CONTIGUOUS, 16, 2, 0, 0) == 36);
  CHECK(causal_pairs(Partition::CONTIGUOUS, 16, 2, 0, 1) == 0);
  // zigzag: chunks of 4; rank 0 holds {0,3}, rank 1 {1,2}. Rank 0 self: 10 + 10 + 16 (chunk 3 sees chunk 0) = 36.
  CHECK(causal_pairs(Partition::ZIGZAG, 16, 2, 0, 0) == 36);
  CHECK(causal_pairs(Partition::ZIGZAG, 16, 2, 0, 1) == 32);  // chunk 3 sees chunks 1 and 2 fully
  CHECK(causal_pairs(Partition::ZIGZAG, 16, 2, 1, 0) == 32);  // chunks 1 and 2 each see chunk 0 fully
  // striped: M = 8 tokens each; i=1 vs j=0: 8*7/2 + 8 = 36; i=0 vs j=1: 28.
  CHECK(causal_pairs(Partition::STRIPED, 16, 2, 1, 0) == 36);
  CHECK(causal_pairs(Partition::STRIPED, 16, 2, 0, 1) == 28);
  // Every scheme covers the whole causal triangle: S(S+1)/2 = 136.
  for (auto p : {Partition::CONTIGUOUS, Partition::ZIGZAG, Partition::STRIPED}) {
    double sum = 0;
    for (int q = 0; q < 2; ++q)
      for (int k = 0; k < 2; ++k) sum += causal_pairs(p, 16, 2, q, k);
    CHECK(sum == 136);
  }
}

namespace {

// Hand-derived time of one Llama-3-8B layer on one H100 node, CP = N ring, zigzag, no TP, B = 1.
//   roofline:  t(flops, bytes, eff) = max(flops / (989e12 * eff), bytes / (3.35e12 * 0.8))
//   qkv:       2*T*4096*(4096 + 2*1024) flops, bytes (4096*6144 + T*4096 + T*6144) * 2, eff 0.75
//   attention: zigzag chunks c = S/(2N); step 0 has 2c^2 + c causal pairs, steps k >= 1 have 2c^2;
//              flops 4 * pairs * 32 heads * 128, bytes T*(2*4096 + 2*1024)*2, eff 0.6
//   transfer:  tau = nvlink_latency + T*2*1024*2 / nvlink_bw (route = two port links of half the latency each)
//   ring:      sum_{k=0}^{N-2} max(c_k, tau) + c_{N-1}   (every rank enters step k+1 when attention, send and
//              receive of step k are done; all ranks are symmetric)
//   o_proj:    2*T*4096*4096; ffn: 2*T*4096*2*14336 + 2*T*14336*4096 (SwiGLU)
double expected_layer_s(double S, int N, double bw_Bps, double latency_s) {
  const double peak = 989e12, hbm = 3.35e12 * 0.8, s = 2, T = S / N, c = S / (2 * N);
  auto t = [&](double flops, double bytes, double eff) { return std::max(flops / (peak * eff), bytes / hbm); };
  auto gemm = [&](double k, double n) { return t(2 * T * k * n, (k * n + T * k + T * n) * s, 0.75); };
  auto attn = [&](double pairs) { return t(4 * pairs * 32 * 128, T * (2 * 4096 + 2 * 1024) * s, 0.6); };
  const double tau = latency_s + T * 2 * 1024 * s / bw_Bps;
  double ring = 0;
  for (int k = 0; k < N - 1; ++k) ring += std::max(attn(k == 0 ? 2 * c * c + c : 2 * c * c), tau);
  ring += attn(2 * c * c);
  return gemm(4096, 6144) + ring + gemm(4096, 4096) + (gemm(4096, 2 * 14336) + gemm(14336, 4096));
}

}  // namespace

TEST_CASE("ring: one layer's time equals the closed form (compute-bound NVLink)", "[ring][oracle]") {
  const Scenario s = test::scenario_from(test::kSmallScenario, {"model.layers=1"});
  const test::Run r = test::simulate(s);
  const double expected = expected_layer_s(32768, 4, 450e9, 2e-6);
  CHECK(r.metrics.makespan_s == Approx(expected).epsilon(1e-6));
  CHECK(r.metrics.layers[0].exposed_comm_s == Approx(0).margin(1e-12));
}

TEST_CASE("ring: one layer's time equals the closed form (communication-bound link)", "[ring][oracle]") {
  // A 20 GB/s, 10 us link makes every transfer longer than its attention step: the ring becomes
  // (N-1) * tau + c_{N-1}, and the difference shows up as exposed communication.
  const Scenario s = test::scenario_from(test::kSmallScenario,
                                         {"model.layers=1", "platform.nvlink_bw=20GBps", "platform.nvlink_latency=10us"});
  const test::Run r = test::simulate(s);
  const double expected = expected_layer_s(32768, 4, 20e9, 10e-6);
  CHECK(r.metrics.makespan_s == Approx(expected).epsilon(1e-6));
  CHECK(r.metrics.layers[0].exposed_comm_s > 0);
}

TEST_CASE("workload size does not depend on sequence length", "[ring][scaling]") {
  // Oracle: the graph has a fixed number of tasks per layer and rank (qkv, N attention steps, o_proj, ffn) and of
  // flows (N-1 hops per rank); S only changes the sizes, so 32K and 1M give identical task and flow counts.
  const Scenario small = test::scenario_from(test::kSmallScenario, {"run.seq_len=32K"});
  const Scenario large = test::scenario_from(test::kSmallScenario, {"run.seq_len=1M"});
  const TaskGraph a = generate_layer_stack(test::inputs_of(small), small.platform.gpu_count());
  const TaskGraph b = generate_layer_stack(test::inputs_of(large), large.platform.gpu_count());
  CHECK(a.task_count() == b.task_count());
  CHECK(a.flow_count() == b.flow_count());
  // compute: layers * ranks * (qkv + o_proj + ffn + 4 attention steps); flows: layers * ranks * 3 hops
  CHECK(a.task_count() == 32u * 4 * (3 + 4) + 32u * 4 * 3);
  CHECK(a.flow_count() == 32u * 4 * 3);
}
