// The shaped kernel model (platform.calibration: default; docs/calibration.md "Kernels"): GEMM wave quantization,
// launch overheads, the FlashAttention-3 size curve and causal tiles, run.mask, and the ideal machine unchanged.
#include <catch2/catch.hpp>
#include <cmath>

#include "support.hpp"
#include "workloads/layer_stack.hpp"
#include "workloads/attention/partition.hpp"
#include "workloads/roofline.hpp"

using namespace cpsim;

namespace {

GpuSpec shaped_h100() {
  GpuSpec g = gpu_preset("h100");
  g.kernels.shaped = true;
  return g;
}

// Sum of every compute task's duration in a graph.
double compute_time_s(const TaskGraph& g) {
  double sum = 0;
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::COMPUTE) sum += t.duration_s;
  return sum;
}

double attention_flops(const TaskGraph& g) {
  double sum = 0;
  for (const Task& t : g.all_tasks())
    if (t.kind == TaskKind::COMPUTE && g.name(t.name) == "attention") sum += t.flops;
  return sum;
}

}  // namespace

TEST_CASE("kernels: the h100 preset carries kernels table v1", "[kernels]") {
  // Oracle: platforms/gpus.yaml h100 kernels: (and h200 names it).
  const GpuSpec h100 = gpu_preset("h100"), h200 = gpu_preset("h200");
  CHECK(h100.kernels.version == 1);
  CHECK(h100.kernels.launch_overhead_s == Approx(4.5e-6));
  CHECK(h100.kernels.gemm_tile_m == 128);
  CHECK(h100.kernels.gemm_tile_n == 256);
  CHECK(h200.kernels.attn_bf16 == h100.kernels.attn_bf16);
  CHECK_FALSE(h100.kernels.shaped);  // a GpuSpec outside read_platform stays the ideal machine
}

TEST_CASE("kernels: GEMM wave quantization over the SMs", "[kernels][gemm]") {
  const GpuSpec g = shaped_h100();
  const double peak = g.kernels.gemm_bf16;
  // Oracle: tiles = ceil(M/128) * ceil(N/256); 11 x 12 = 132 tiles = one full wave on 132 SMs: efficiency = peak.
  CHECK(gemm_efficiency(g, Dtype::BF16, 128 * 11, 256 * 12, 4096) == Approx(peak));
  // 7 x 19 = 133 tiles: two waves, the second with one tile: 133 / (2 * 132) = 0.504 of the peak (about half).
  CHECK(gemm_efficiency(g, Dtype::BF16, 128 * 7, 256 * 19, 4096) == Approx(peak * 133.0 / 264));
  // Partial tiles compute whole: M = 64 fills half of each 128-row tile (1 x 132 tiles, one wave): 0.5 of peak.
  CHECK(gemm_efficiency(g, Dtype::BF16, 64, 256 * 132, 4096) == Approx(peak * 0.5));
  // FP8 uses its own achieved peak.
  CHECK(gemm_efficiency(g, Dtype::FP8, 128 * 11, 256 * 12, 4096) == Approx(g.kernels.gemm_fp8));
}

TEST_CASE("kernels: launch overhead is paid once per kernel", "[kernels]") {
  const GpuSpec g = shaped_h100();
  // Oracle: a compute-bound GEMM of one full wave takes launch + 2mnk / (peak * eff).
  const double m = 128 * 11 * 4, n = 256 * 12, k = 8192, flops = 2 * m * n * k;
  CHECK(gemm_time_s(g, Dtype::BF16, m, n, k, 0) ==
        Approx(g.kernels.launch_overhead_s + flops / (989e12 * g.kernels.gemm_bf16)));
  // A memory pass: launch + bytes / (hbm_bw * memory).
  CHECK(memory_time_s(g, 1e9) == Approx(g.kernels.launch_overhead_s + 1e9 / (3.35e12 * g.kernels.memory)));

  // One prefill layer, zigzag ring over 4 GPUs: per GPU qkv (1 kernel), 4 ring attention steps (4), 3 partial-output
  // merges (3), o_proj (1), FFN up + down (2) = 11 kernels; dropping the overhead removes 11 * 4 GPUs launches.
  Scenario s = test::scenario_from(test::kSmallScenario, {"model.layers=1", "platform.calibration=default"});
  REQUIRE(s.platform.gpu.kernels.shaped);
  const double with = compute_time_s(generate_layer_stack(test::inputs_of(s), s.platform.gpu_count()));
  const double launch = s.platform.gpu.kernels.launch_overhead_s;
  s.platform.gpu.kernels.launch_overhead_s = 0;
  const double without = compute_time_s(generate_layer_stack(test::inputs_of(s), s.platform.gpu_count()));
  CHECK(with - without == Approx(11 * 4 * launch).epsilon(1e-6));
}

TEST_CASE("kernels: FA3 size curve matches the fitted microbenchmark points", "[kernels][attention]") {
  const GpuSpec g = shaped_h100();
  // Oracle: FA3 paper (arXiv:2407.08608) Fig. 5 head dim 128 BF16 forward on H100 SXM5, batch * seqlen = 16K,
  // 16 heads (gpus.yaml comment): TF/s per seqlen, non-causal and causal. The fit reproduces each within 5 %.
  const double lens[] = {512, 1024, 2048, 4096, 8192, 16384};
  const double full_tfs[] = {497, 565, 625, 638, 646, 648};
  const double causal_tfs[] = {292, 423, 521, 579, 602, 616};
  double prev = 0;
  for (int i = 0; i < 6; ++i) {
    const double L = lens[i], batch = 16384 / L;
    const double full = attention_efficiency(g, Dtype::BF16, {L, L, 16, batch, Mask::FULL, 1}) * 989;
    const double causal = attention_efficiency(g, Dtype::BF16, {L, L, 16, batch, Mask::CAUSAL_DIAGONAL, 1}) * 989;
    CHECK(full == Approx(full_tfs[i]).epsilon(0.05));
    CHECK(causal == Approx(causal_tfs[i]).epsilon(0.05));
    CHECK(causal < full);  // the diagonal tiles are computed whole and masked
    CHECK(full > prev);    // monotone in the sequence length
    prev = full;
  }
}

TEST_CASE("kernels: attention efficiency grows with the KV length and saturates", "[kernels][attention]") {
  const GpuSpec g = shaped_h100();
  // Oracle: eff = attn_bf16 * wave * Lk / (Lk + lk_half) for a non-causal call whose grid fills the SMs exactly
  // (q tiles x heads = 132): strictly increasing in Lk, below attn_bf16, within 1 % of it at Lk = 64K.
  double prev = 0;
  for (double lk : {128.0, 512.0, 2048.0, 8192.0, 65536.0}) {
    const double e = attention_efficiency(g, Dtype::BF16, {128 * 11, lk, 12, 1, Mask::FULL, 1});
    CHECK(e == Approx(g.kernels.attn_bf16 * lk / (lk + g.kernels.attn_lk_half_tokens)));
    CHECK(e > prev);
    prev = e;
  }
  CHECK(prev < g.kernels.attn_bf16);
  CHECK(prev > 0.99 * g.kernels.attn_bf16);
  // Causal < full at equal size (same useful-pair count: the causal call does half the pairs in more than half the time).
  for (double L : {1024.0, 8192.0, 65536.0}) {
    const double full = attention_efficiency(g, Dtype::BF16, {L, L, 32, 1, Mask::FULL, 4});
    const double causal = attention_efficiency(g, Dtype::BF16, {L, L, 32, 1, Mask::CAUSAL_DIAGONAL, 4});
    CHECK(causal < full);
  }
}

TEST_CASE("kernels: ideal calibration reproduces the fixed-efficiency roofline exactly", "[kernels][ideal]") {
  const GpuSpec g = gpu_preset("h100");  // unshaped
  // Oracle: the seeds' formula max(flops / (peak * eff_class), bytes / (hbm_bw * eff_memory)), bit for bit.
  const double m = 4096, n = 6144, k = 4096, bytes = (m * k + k * n + m * n) * 2;
  CHECK(gemm_time_s(g, Dtype::BF16, m, n, k, bytes) == std::max(2 * m * k * n / (989e12 * 0.75), bytes / (3.35e12 * 0.8)));
  const double flops = 3e12;
  CHECK(attention_time_s(g, Dtype::BF16, {8192, 8192, 32, 1, Mask::CAUSAL_DIAGONAL, 4}, flops, 1e8) ==
        std::max(flops / (989e12 * 0.6), 1e8 / (3.35e12 * 0.8)));
  CHECK(memory_time_s(g, 1e9) == 1e9 / (3.35e12 * 0.8));
  // A scenario pinned to ideal reads unshaped kernels; default reads shaped ones.
  const Scenario ideal = test::scenario_from(test::kSmallScenario);
  CHECK_FALSE(ideal.platform.gpu.kernels.shaped);
  const Scenario shaped = test::scenario_from(test::kSmallScenario, {"platform.calibration=default"});
  CHECK(shaped.platform.gpu.kernels.shaped);
}

TEST_CASE("mask: full doubles the pairs of a causal contiguous S x S", "[kernels][mask]") {
  // Oracle: one rank (cp 1) holds the whole sequence: causal pairs S(S+1)/2, full S^2; ratio 2S / (S+1).
  const double S = 8192;
  CHECK(block_pairs(Partition::CONTIGUOUS, true, 8192, 1, 0, 0) == S * S);
  CHECK(block_pairs(Partition::CONTIGUOUS, false, 8192, 1, 0, 0) == S * (S + 1) / 2);
  // Under CP every block is full: contiguous rank 0 against rank 3 (masked when causal) has (S/N)^2 pairs.
  CHECK(block_pairs(Partition::CONTIGUOUS, true, 8192, 4, 0, 3) == 2048.0 * 2048);
  CHECK(block_pairs(Partition::CONTIGUOUS, false, 8192, 4, 0, 3) == 0);
  // Through a scenario: ring over 4 ranks, attention flops with run.mask full = S^2 / (S(S+1)/2) times causal.
  for (const char* algo : {"ring", "ulysses", "allgather"}) {
    const std::vector<std::string> base = {"model.layers=1", "run.seq_len=8K", std::string("cp.dense.algorithm=") + algo,
                                           "cp.dense.partition=contiguous"};
    std::vector<std::string> full = base;
    full.push_back("run.mask=full");
    const Scenario sc = test::scenario_from(test::kSmallScenario, base), sf = test::scenario_from(test::kSmallScenario, full);
    const double causal_flops = attention_flops(generate_layer_stack(test::inputs_of(sc), 4));
    const double full_flops = attention_flops(generate_layer_stack(test::inputs_of(sf), 4));
    INFO(algo);
    CHECK(full_flops / causal_flops == Approx(2 * S / (S + 1)));
  }
}

TEST_CASE("platform: gpu as a mapping, kernels naming a preset, and a user presets file", "[kernels][platform]") {
  // Oracle: the mapping's numbers as written; kernels: h100 copies the h100 table.
  const Scenario s = test::scenario_from(R"(
name: t
platform:
  preset: hgx-h100
  gpu: {name: h100-500w, bf16: 800Tf, hbm_bw: 2.4TBps, sms: 132, kernels: h100}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 8K}
parallel: {cp: 2}
)");
  CHECK(s.platform.gpu.bf16_flops == Approx(800e12));
  CHECK(s.platform.gpu.hbm_bw_Bps == Approx(2.4e12));
  CHECK(s.platform.gpu.kernels.shaped);
  CHECK(s.platform.gpu.kernels.attn_bf16 == gpu_preset("h100").kernels.attn_bf16);

  // A presets file next to the scenario: its GPU is selectable by name, with its own kernels table.
  test::write_temp(R"(
kernels_version: 1
mygpu:
  name: My GPU
  bf16: 500Tf
  hbm_bw: 2TBps
  sms: 100
  kernels:
    launch_overhead: 3us
    gemm: {tile_m: 128, tile_n: 128, bf16: 0.7}
    attention: {q_tile: 128, kv_tile: 128, bf16: 0.6, lk_half_tokens: 100, diag_extra: 0.5}
    memory: 0.9
)", "my-presets.yaml");
  const Scenario u = test::scenario_from(R"(
name: t
platform: {preset: hgx-h100, presets: my-presets.yaml, gpu: mygpu}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 8K}
parallel: {cp: 2}
)");
  CHECK(u.platform.gpu.name == "My GPU");
  CHECK(u.platform.gpu.sm_count == 100);
  CHECK(u.platform.gpu.kernels.launch_overhead_s == Approx(3e-6));
  CHECK(u.platform.gpu.kernels.gemm_tile_n == 128);
  CHECK(u.platform.gpu.kernels.gemm_fp8 == Approx(0.7));  // fp8 defaults to the bf16 fraction
}

TEST_CASE("kernels: ring steps are priced as the partition's kernel calls", "[kernels][ring]") {
  // Oracle: docs/calibration.md "How the workloads call it". Zigzag, S = 32K over 4 ranks: T = 8K tokens per rank,
  // chunks c = 4K. Rank 2's step 0 is its diagonal (causal 8K x 8K); step 1 sees rank 1, an earlier rank: both
  // query chunks against its first chunk, a full 8K x 4K call, plus the merge of the partial output (T * q_w * 10 B).
  Scenario s = test::scenario_from(test::kSmallScenario, {"model.layers=1", "platform.calibration=default"});
  const TaskGraph g = generate_layer_stack(test::inputs_of(s), s.platform.gpu_count());
  const GpuSpec& gpu = s.platform.gpu;
  const double T = 8192, c = 4096, qw = 32 * 128, kvw = 8 * 128;
  const double bytes = (2 * T * qw + 2 * T * kvw) * 2;
  const double diag_flops = 4 * (T * (T + 1) / 2) * 32 * 128, off_flops = 4 * (T * c) * 32 * 128;
  const double diag = attention_time_s(gpu, Dtype::BF16, {T, T, 32, 1, Mask::CAUSAL_DIAGONAL, 4}, diag_flops, bytes);
  const double off = attention_time_s(gpu, Dtype::BF16, {T, c, 32, 1, Mask::FULL, 4}, off_flops, bytes) +
                     memory_time_s(gpu, T * qw * (4 + 2 + 4));
  int found = 0;
  for (const Task& t : g.all_tasks()) {
    if (t.kind != TaskKind::COMPUTE || g.name(t.name) != "attention" || t.gpu != 2) continue;
    if (t.step == 0) {
      CHECK(t.duration_s == Approx(diag));
      ++found;
    }
    if (t.step == 1) {
      CHECK(t.duration_s == Approx(off));
      ++found;
    }
  }
  CHECK(found == 2);
  // The off-diagonal half block runs at a higher efficiency than the causal diagonal of twice its length.
  CHECK(attention_efficiency(gpu, Dtype::BF16, {T, c, 32, 1, Mask::FULL, 4}) >
        attention_efficiency(gpu, Dtype::BF16, {T, T, 32, 1, Mask::CAUSAL_DIAGONAL, 4}));
}

TEST_CASE("kernels: few q blocks over a long KV pack GQA heads and split the keys (FA3 heuristics)", "[kernels][attention]") {
  // Meta's persistent-KV prefill, CP4 x TP8, 2.5% miss (arXiv:2411.01783 Table 5): each GPU attends 800 queries of
  // 16 heads sharing 1 KV head to 32000 keys. Per-head rows: ceil(800/128) = 7 q tiles x 16 heads = 112 CTAs,
  // 85% of 132 SMs and 800/896 of the tiles useful: fill 112/132 * 800/896 = 0.758 (times the KV-loop factor).
  // Packed (FA3 pack_gqa): 12800 rows = 100 q tiles, 100 CTAs < 0.8 * 132, so the keys split: the fewest splits
  // within 85% of the best wave efficiency. Oracle: the packed, split layout's fill beats the per-head one.
  const GpuSpec g = shaped_h100();
  const AttentionShape meta{800, 32000, 16, 1, Mask::FULL, 16};
  const AttentionShape per_head{800, 32000, 16, 1, Mask::FULL, 1};  // same work, no KV-head sharing to pack
  const double kv_loop = 32000.0 / (250 * 128 + g.kernels.attn_lk_half_tokens);  // ceil(32000/128) = 250 KV tiles
  CHECK(attention_efficiency(g, Dtype::BF16, per_head) ==
        Approx(g.kernels.attn_bf16 * 112.0 / 132 * 800.0 / 896 * kv_loop).epsilon(1e-12));
  const double packed = attention_efficiency(g, Dtype::BF16, meta);
  CHECK(packed > attention_efficiency(g, Dtype::BF16, per_head));
  // With 100 CTAs: 1 to 4 splits fill 100/132 = 200/264 = 300/396 = 400/528 = 0.758, 5 splits 500/528 = 0.947; the
  // best (1.0 at 33 splits: 3300 = 25 waves x 132) sets the bar at 0.85: 5 splits, each paying the per-CTA cost.
  const double five = 500.0 / 528 * 32000.0 / (250 * 128 + 5 * g.kernels.attn_lk_half_tokens);
  CHECK(packed == Approx(g.kernels.attn_bf16 * five).epsilon(1e-12));
}
