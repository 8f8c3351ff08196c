// Each heterogeneous attention mode simulated end to end (one layer, CP 4 on one H100 node): the CP bytes a rank
// receives (max over ranks, from the executed flows) equal the mode's closed form for the same parameters
// (workloads/attention/closed_form.cpp), and the memory report shows DSA's full-sequence KV. One SimGrid engine per
// TEST_CASE, so one mode per case.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cpsim;

namespace {

// A DeepSeek-shaped model (MLA d_c = 512) or a GQA one, with the given attention pattern.
std::string scenario_with(const std::string& pattern, const std::string& cp_block, bool mla = true) {
  return std::string(R"(
name: hetero
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8, calibration: ideal}
model:
  name: tiny
  layers: 1
  d_model: 4096
  n_heads: 32
  n_kv_heads: 8
  head_dim: 128
  ffn_dim: 8192
  vocab: 32000
  sliding_window: 4096
)") + (mla ? "  mla: {d_c: 512, rope_dim: 64}\n" : "") + "  attention: {pattern: " + pattern + "}\n" + R"(
run: {phase: prefill, seq_len: 128K, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
cp: )" + cp_block + "\n";
}

void check_volume_matches(const test::Run& r, double expected_bytes) {
  REQUIRE(r.metrics.volumes.size() == 1);
  const auto& v = r.metrics.volumes[0];
  INFO(v.layer_kind << " / " << v.cp_algorithm << ": " << v.formula);
  REQUIRE(v.formula_bytes);
  CHECK(v.simulated_bytes == *v.formula_bytes);
  CHECK(v.simulated_bytes == expected_bytes);
}

constexpr double MiB = 1024.0 * 1024.0;

}  // namespace

TEST_CASE("simulated: swa boundary moves min(n_win, S/N) tokens of KV from the left neighbour", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[swa]", "{swa: {algorithm: boundary}}", false)));
  check_volume_matches(r, 4096 * 2 * 1024 * 2);  // n_win * 2 * d_kv * s = 16 MiB (the seed's Mistral example)
}

TEST_CASE("simulated: hca local dense moves nothing, hca allgather the compressed KV", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[hca]", "{hca: {algorithm: allgather}}")));
  check_volume_matches(r, 1.5 * MiB);  // (3/4) * 128K/128 * 2*512*2
}

TEST_CASE("simulated: csa allgather of the C4-compressed latent", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[csa]", "{csa: {algorithm: allgather}}")));
  check_volume_matches(r, 0.75 * 32768 * 2048);  // (3/4) * S/4 * c_kv = 48 MiB
}

TEST_CASE("simulated: dsa allgather of KV latent and hidden states; every rank keeps the full KV", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: allgather}}")));
  check_volume_matches(r, 0.75 * 131072 * (2048 + 4096 * 2));  // (3/4) * S * (c_kv + d_model * s)
  // Memory: the full S = 128K tokens on every rank, 4x the local share; MLA caches d_c + rope_dim = 512 + 64 values
  // of 2 B per token (1152 B), the seed's c_kv = 2 * d_c (2 KiB) in the formula column.
  CHECK(r.metrics.ranks[0].memory.kv_cache_bytes == 131072.0 * 1152);
  CHECK(r.metrics.ranks[0].memory.kv_cache_seed_bytes == 131072.0 * 2048);
}

TEST_CASE("simulated: dsa select-then-gather: top-k merge plus the remote share of k", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: select-gather}}")));
  check_volume_matches(r, 3 * 2048 * 8 + 1536 * 2048.0);  // (N-1)*k*8 + (3/4)k * c_kv
  CHECK(r.metrics.volumes[0].exact == false);  // local keys only: flagged approximate
  CHECK(r.metrics.ranks[0].memory.kv_cache_bytes == 32768.0 * 1152);  // local share only: 1/N of allgather's
  CHECK(r.metrics.ranks[0].memory.kv_cache_seed_bytes == 32768.0 * 2048);
}

namespace {

// Indexer flops per GPU of the layer (2 x 64 heads x 128 dims per scored pair), in GPU order.
std::vector<double> indexer_flops(const test::Run& r) {
  std::vector<double> out(r.scenario.platform.gpu_count(), 0);
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::COMPUTE && r.graph.name(t.name) == "indexer") out[t.gpu] += t.flops;
  return out;
}

}  // namespace

TEST_CASE("simulated: dsa allgather, in-seq-split (zigzag): every rank scores the same causal pairs", "[hetero][sim]") {
  const test::Run r = test::simulate(
      test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: allgather, partition: zigzag}}")));
  // Rank r holds blocks r and 7-r of S/8 = 16K tokens: its queries see b*(S+1) = 16384 x 131073 keys, on every rank.
  const std::vector<double> flops = indexer_flops(r);
  for (int gpu = 0; gpu < 4; ++gpu) CHECK(flops[gpu] == 2.0 * 64 * 128 * 16384 * 131073);
  // The sparse attention reads min(k, keys) per query: the first k tokens (on rank 0) read fewer, so the layer's
  // attention kernels are balanced to within 0.1%, the summary's causal balance says so.
  CHECK(r.metrics.by_kind[0].attention_balance > 0.999);
  CHECK(r.metrics.by_kind[0].attention_balance <= 1.0);
}

TEST_CASE("simulated: dsa allgather, round-robin-split: later ranks score slightly more", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: allgather}}")));
  // Rank r's queries sit at j*4 + r (j < L = 32768) and see j*4 + r + 1 keys: 4 L(L-1)/2 + L(r+1) pairs.
  const std::vector<double> flops = indexer_flops(r);
  const double L = 32768;
  for (int gpu = 0; gpu < 4; ++gpu) CHECK(flops[gpu] == 2.0 * 64 * 128 * (4 * L * (L - 1) / 2 + L * (gpu + 1)));
  // Nearly balanced (rank 3 scores 3L pairs more than rank 0 out of ~2 L^2), but not exactly.
  CHECK(r.metrics.by_kind[0].attention_balance < 1.0);
  CHECK(r.metrics.by_kind[0].attention_balance > 0.9999);
}

TEST_CASE("dsa partition: SGLang's constraints", "[hetero][errors]") {
  CHECK_THROWS_WITH(
      test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: allgather, partition: zigzag}}"), {"run.batch=2"}),
      Catch::Contains("cp.dsa.partition: zigzag (in-seq-split) runs batch 1, got run.batch 2"));
  CHECK_THROWS_WITH(test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: allgather, partition: zigzag}}"),
                                        {"run.seq_len=131076", "cp.dense.partition=contiguous"}),
                    Catch::Contains("zigzag needs S (131076) divisible by 2 x cp (8)"));
  CHECK_THROWS_WITH(
      test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: select-gather, partition: zigzag}}")),
      Catch::Contains("cp.dsa.partition: applies to AllGather-CP"));
}

TEST_CASE("simulated: dsa exact select-then-gather: the indexer queries reach every rank first", "[hetero][sim]") {
  const test::Run r = test::simulate(
      test::scenario_from(scenario_with("[dsa]", "{dsa: {algorithm: select-gather, exact: true}}")));
  // The approximate mode's bytes plus the AllGather of the other ranks' indexer queries: 3 x 32768 tokens x
  // 64 heads x 128 dims x 1 B (FP8).
  check_volume_matches(r, 3 * 32768.0 * 64 * 128 + 3 * 2048 * 8 + 1536 * 2048.0);
  CHECK(r.metrics.volumes[0].exact == true);  // flagged in summary.volumes
  // Every rank scores all S queries against its own entries: causal half of 128K x 32K pairs, 2 x 64 x 128 flops each.
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::COMPUTE && r.graph.name(t.name) == "local indexer")
      CHECK(t.flops == 2.0 * (131072.0 * 32768 / 2) * 64 * 128);
}

TEST_CASE("simulated: moba centroid allgather and block gather", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[moba]", "{moba: {algorithm: gather}}", false)));
  // centroids (3/4) * 128K/512 * 1024 * 2 = 0.375 MiB; blocks 6 remote of 8 * 512 * 2*1024*2 = 12 MiB
  check_volume_matches(r, 0.375 * MiB + 12 * MiB);
}

TEST_CASE("simulated: skewed moba selection makes the hot rank's gather the slow one", "[hetero][sim][moba]") {
  const test::Run r = test::simulate(test::scenario_from(
      scenario_with("[moba]", "{moba: {algorithm: gather, selection: skewed, hot_fraction: 0.75, hot_rank: 2}}", false),
      {"platform.nvlink_bw=20GBps"}));
  // Every other rank takes 3/4 + 1/16 of its 8 blocks from rank 2 (largest remainder: 6 blocks of 512 tokens x
  // 4 KiB = 12 MiB), so rank 2 serves 3 x 12 MiB through one 20 GB/s port while every other rank serves 1 block
  // (2 MiB) to each of two readers. Oracle: the hot rank's block-gather sends span 3 x 12 MiB / 20 GB/s, at least
  // three times any other rank's, and its CP bytes sent are the largest by that factor.
  std::vector<double> first(4, 1e30), last(4, 0);
  for (std::size_t i = 0; i < r.graph.task_count(); ++i) {
    const Task& t = r.graph.task(static_cast<TaskId>(i));
    if (t.kind != TaskKind::FLOW || r.graph.name(t.name) != "moba block gather") continue;
    first[t.gpu] = std::min(first[t.gpu], r.result.start_s[i]);
    last[t.gpu] = std::max(last[t.gpu], r.result.finish_s[i]);
  }
  const double hot_span = last[2] - first[2];
  CHECK(hot_span == Approx(2e-6 + 3 * 12 * MiB / 20e9).epsilon(1e-6));
  for (int g : {0, 1, 3}) {
    INFO("rank " << g << " serves for " << last[g] - first[g] << " s, the hot rank for " << hot_span << " s");
    CHECK(hot_span > 3 * (last[g] - first[g]));
    CHECK(r.metrics.ranks[2].bytes_sent[static_cast<int>(Traffic::CP)] >
          2 * r.metrics.ranks[g].bytes_sent[static_cast<int>(Traffic::CP)]);
  }
}

TEST_CASE("simulated: lasp2 gathers every rank's [B,H,d,d] state", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[linear]", "{linear: {algorithm: lasp2}}", false)));
  check_volume_matches(r, 3.0 * 32 * 128 * 128 * 2);  // (N-1) * B*H*d^2*s = 3 MiB
}

TEST_CASE("simulated: lasp2 bytes stay constant from 128K to 2M", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[linear]", "{linear: {algorithm: lasp2}}", false),
                                                         {"run.seq_len=2M"}));
  check_volume_matches(r, 3.0 * 32 * 128 * 128 * 2);  // same as at 128K: independent of S
}

TEST_CASE("simulated: lasp1 passes the prefix state along the chain", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[linear]", "{linear: {algorithm: lasp1}}", false)));
  check_volume_matches(r, 32.0 * 128 * 128 * 2);  // B*H*d^2*s from the left neighbour
}

TEST_CASE("simulated: V4-style swa+csa layer sums its two parts", "[hetero][sim]") {
  const test::Run r = test::simulate(test::scenario_from(scenario_with("[swa+csa]", "{swa: {algorithm: boundary}}"),
                                                         {"model.sliding_window=128"}));
  check_volume_matches(r, 128 * 2048 + 0.75 * 32768 * 2048);  // n_win * c_kv + (3/4) * S/4 * c_kv
}
