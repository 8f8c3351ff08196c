// Decode for every attention kind (workloads/attention/decode_lowering.hpp): per decode step, the CP bytes each rank
// receives equal the mode's closed form, the token's state stays on the tail rank, and on an uncontended machine the
// step time is the algorithm's chain of kernels and flows. Oracles: the seeds' decode semantics per kind
// (heterogeneous-attention-cp.md) and the byte counts derived beside each assertion; flow times on the ideal machine
// are latency + bytes / bandwidth, as in decode_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

#include "sim/report/headline.hpp"
#include "support.hpp"

using namespace cpsim;

namespace {

// A small GQA model (no MLA: c_kv = 2 x 8 heads x 128 x 2 B = 4 KiB per token), one layer, decoded on 4 GPUs of
// one node, or (kTwoNodes) on two nodes joined by a slow NIC (300 us one way, 50 GB/s) so every flow is visible.
const std::string kOneNode = "platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 4, calibration: ideal}\n";
const std::string kTwoNodes =
    "platform: {preset: hgx-h100, nodes: 2, gpus_per_node: 1, nic_latency: 300us, calibration: ideal}\n";
const std::string kSmallModel = R"(
name: decode-kinds
model:
  name: small
  layers: 1
  d_model: 1024
  n_heads: 8
  n_kv_heads: 8
  head_dim: 128
  ffn_dim: 4096
  vocab: 32000
  sliding_window: 4096
  attention: {pattern: [hca], csa_ratio: 4, hca_ratio: 128, csa_top_k: 512, dsa_top_k: 2048, indexer_heads: 16,
              indexer_dim: 64, moba_block: 512, moba_top_k_blocks: 8}
run: {phase: decode, context_len: 64K, new_tokens: 1, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
)";
const std::string kKinds = kOneNode + kSmallModel;
constexpr double kCkv = 2 * 8 * 128 * 2;  // bytes of K + V per token
constexpr double kContext = 65536;

const VolumeRow& only_row(const test::Run& r) {
  REQUIRE(r.metrics.volumes.size() == 1);
  return r.metrics.volumes[0];
}

// The compute tasks of the run by name, each with its GPU, flops and duration.
std::multimap<std::string, Task> kernels(const test::Run& r) {
  std::multimap<std::string, Task> out;
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::COMPUTE) out.insert({r.graph.name(t.name), t});
  return out;
}
double duration(const test::Run& r, const std::string& name, int gpu) {
  for (const auto& [n, t] : kernels(r))
    if (n == name && t.gpu == gpu) return t.duration_s;
  FAIL("no kernel " << name << " on GPU " << gpu);
  return 0;
}
std::set<int> gpus_computing(const test::Run& r) {
  std::set<int> out;
  for (const auto& [n, t] : kernels(r)) out.insert(t.gpu);
  return out;
}
double compute_sum(const test::Run& r, int gpu) {
  double s = 0;
  for (const auto& [n, t] : kernels(r))
    if (t.gpu == gpu) s += t.duration_s;
  return s;
}

}  // namespace

TEST_CASE("decode hca: local, the compressed cache on the tail rank, no CP bytes", "[decode][hca]") {
  const test::Run r = test::simulate(test::scenario_from(kKinds));
  CHECK(only_row(r).simulated_bytes == 0);  // the seed: V4's decode is local
  CHECK(*only_row(r).formula_bytes == 0);
  CHECK(gpus_computing(r) == std::set<int>{3});  // the tail rank holds the token and its compressed cache
  // The token attends floor((64K + 1) / 128) = 512 compressed entries: 4 x 512 x 8 heads x 128 flops.
  CHECK(kernels(r).find("compressed attention")->second.flops == 4.0 * 512 * 8 * 128);
  // One GPU, no communication: the step is its kernels in sequence.
  CHECK(r.metrics.makespan_s == Approx(compute_sum(r, 3)).epsilon(1e-9));
}

TEST_CASE("decode swa boundary: the window is local to the tail rank", "[decode][swa]") {
  const test::Run r = test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[swa]"}));
  CHECK(only_row(r).simulated_bytes == 0);  // n_win = 4096 <= S/N = 16384: no left-neighbour part
  CHECK(*only_row(r).formula_bytes == 0);
  CHECK(kernels(r).find("swa attention")->second.flops == 4.0 * 4096 * 8 * 128);  // min(n_win, C + 1) keys
  CHECK(r.metrics.makespan_s == Approx(compute_sum(r, 3)).epsilon(1e-9));
}

TEST_CASE("decode swa allgather: the window's KV from every rank to the tail", "[decode][swa]") {
  const test::Run r =
      test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[swa]", "cp.swa.algorithm=allgather"}));
  // Round-robin: each of the 3 other ranks holds 4096 / 4 = 1024 window tokens: 3 x 1024 x 4 KiB = 12 MiB.
  CHECK(only_row(r).simulated_bytes == 3 * 1024 * kCkv);
  CHECK(*only_row(r).formula_bytes == only_row(r).simulated_bytes);
  CHECK(r.metrics.ranks[3].bytes_received[int(Traffic::CP)] == 3 * 1024 * kCkv);
}

TEST_CASE("decode csa full write-back: indexer over every entry on the tail, no CP bytes", "[decode][csa]") {
  const test::Run r = test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[csa]"}));
  CHECK(only_row(r).simulated_bytes == 0);
  CHECK(*only_row(r).formula_bytes == 0);
  // floor(65537 / 4) = 16384 entries scored (2 x 16 x 64 flops each), then attention over the top 512.
  CHECK(kernels(r).find("indexer")->second.flops == 2.0 * 16384 * 16 * 64);
  CHECK(kernels(r).find("sparse attention")->second.flops == 4.0 * 512 * 8 * 128);
  CHECK(r.metrics.makespan_s == Approx(compute_sum(r, 3)).epsilon(1e-9));
}

TEST_CASE("decode csa select-gather: exact top-k from every rank's candidates, then the selected entries",
          "[decode][csa]") {
  const test::Run r =
      test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[csa]", "cp.csa.algorithm=select-gather"}));
  // The tail receives 3 ranks x 512 candidates x 8 B, then the 3 x 128 selected entries it does not own (k = 512
  // spread uniformly): 12288 + 384 x 4096 B. Each other rank receives the indexer query (16 x 64 FP8 bytes) and
  // the indices of its 128 selections (4 B each).
  const double tail = 3 * 512 * 8 + 384 * kCkv, owner = 16 * 64 + 128 * 4;
  CHECK(only_row(r).simulated_bytes == tail);
  CHECK(*only_row(r).formula_bytes == tail);
  CHECK(r.metrics.ranks[3].bytes_received[int(Traffic::CP)] == tail);
  CHECK(r.metrics.ranks[0].bytes_received[int(Traffic::CP)] == owner);
  // Every rank scores its quarter of the 16384 entries.
  for (const auto& [name, t] : kernels(r))
    if (name == "local indexer") CHECK(t.flops == 2.0 * 4096 * 16 * 64);
}

TEST_CASE("decode dsa full write-back: the indexer scores the whole context on the tail", "[decode][dsa]") {
  const test::Run r = test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[dsa]"}));
  CHECK(only_row(r).simulated_bytes == 0);  // every rank holds every token's KV since the prefill's AllGather
  CHECK(kernels(r).find("indexer")->second.flops == 2.0 * (kContext + 1) * 16 * 64);
  CHECK(kernels(r).find("sparse attention")->second.flops == 4.0 * 2048 * 8 * 128);
  CHECK(r.metrics.makespan_s == Approx(compute_sum(r, 3)).epsilon(1e-9));
}

TEST_CASE("decode dsa select-gather: the step time is the algorithm's chain of kernels and flows", "[decode][dsa]") {
  const test::Run r = test::simulate(test::scenario_from(
      kTwoNodes + kSmallModel, {"model.attention.pattern=[dsa]", "cp.dsa.algorithm=select-gather", "parallel.cp=2"}));
  // Hand derivation (home = rank 1, the tail; rank 0 owns half the context): the home projects the token (q), sends
  // the indexer query (1024 B), rank 0 scores its 32768 entries and keeps its top 2048 (i0, k0), returns them
  // (2048 x 8 B), the home merges (m), asks rank 0 for its 1024 selections (4 B each) and receives their KV
  // (1024 x 4 KiB), attends the 2048 (a), then o_proj and FFN. Each flow: 300 us + bytes / 50 GB/s. The home's own
  // scoring runs while the query is in flight.
  auto flow = [](double bytes) { return 300e-6 + bytes / 50e9; };
  const double chain = duration(r, "qkv_proj", 1) + flow(16 * 64) + duration(r, "local indexer", 0) +
                       duration(r, "local top-k", 0) + flow(2048 * 8) + duration(r, "global top-k", 1) +
                       flow(1024 * 4) + flow(1024 * kCkv) + duration(r, "sparse attention", 1) +
                       duration(r, "o_proj", 1) + duration(r, "ffn", 1);
  REQUIRE(duration(r, "local indexer", 1) + duration(r, "local top-k", 1) < flow(16 * 64));
  CHECK(r.metrics.makespan_s == Approx(chain).epsilon(1e-6));
  // Bytes: the home receives 2048 x 8 + 1024 x 4096; rank 0 receives 1024 + 1024 x 4.
  CHECK(only_row(r).simulated_bytes == 2048 * 8 + 1024 * kCkv);
  CHECK(*only_row(r).formula_bytes == only_row(r).simulated_bytes);
}

TEST_CASE("decode moba: the tail gates every block centroid and gathers its top blocks", "[decode][moba]") {
  const test::Run r = test::simulate(test::scenario_from(
      kKinds, {"model.attention.pattern=[moba]", "cp.moba.selection=skewed", "cp.moba.hot_fraction=0.75"}));
  // k = 8 blocks; skewed: rank 0 weighs 0.75 + 0.25/4, the others 0.25/4: shares 6.5, 0.5, 0.5, 0.5, rounded by
  // largest remainder (ties to the lower rank) to {7, 1, 0, 0}. The tail owns none: it receives all 8 blocks of
  // 512 tokens x 4 KiB = 16 MiB.
  CHECK(only_row(r).simulated_bytes == 8 * 512 * kCkv);
  CHECK(*only_row(r).formula_bytes == only_row(r).simulated_bytes);
  CHECK(kernels(r).find("block attention")->second.flops == 4.0 * 8 * 512 * 8 * 128);
}

TEST_CASE("decode linear: the state on the tail rank, a cost independent of the context", "[decode][linear]") {
  const test::Run r =
      test::simulate(test::scenario_from(kKinds, {"model.attention.pattern=[linear]", "run.context_len=1M"}));
  CHECK(only_row(r).simulated_bytes == 0);
  CHECK(gpus_computing(r) == std::set<int>{3});
  // Update (k^T v) and application (q M) of the 8 x 128 x 128 state: 4 x 8 x 128^2 flops, whatever the context.
  CHECK(kernels(r).find("state update")->second.flops == 4.0 * 8 * 128 * 128);
}

TEST_CASE("decode hybrid: the hidden state moves to every rank when a tree layer follows a linear one",
          "[decode][linear][tree]") {
  const test::Run r = test::simulate(test::scenario_from(
      kKinds, {"model.attention.pattern=[linear, dense]", "model.layers=2", "cp.dense.algorithm=tree"}));
  // Layer 1 (dense, tree) needs the token on every rank; layer 0 (linear) left it on the tail: a broadcast of
  // B x d_model x 2 B = 2 KiB to each of the 3 other ranks, counted in the dense layer beside the tree's 2 levels of
  // 8 heads x (4 + 4 + 256) B.
  int moves = 0;
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::FLOW && r.graph.name(t.name) == "decode hidden move") {
      ++moves;
      CHECK(t.gpu == 3);  // from the tail
    }
  CHECK(moves == 3);
  for (const VolumeRow& v : r.metrics.volumes)
    if (v.layer_kind == "dense") {
      CHECK(v.simulated_bytes == 2 * 8 * (4 + 4 + 256) + 1024 * 2);
      CHECK(*v.formula_bytes == v.simulated_bytes);
    }
}

TEST_CASE("decode: kinds of one layer must keep the token on the same GPU", "[decode][errors]") {
  CHECK_THROWS_WITH(test::scenario_from(kKinds, {"model.attention.pattern=[dense+swa]", "cp.dense.algorithm=tree"}),
                    Catch::Contains("run.phase: the kinds of dense+swa layers keep the decode token on different GPUs"));
}

TEST_CASE("decode v4-1m: HCA layers move nothing, the headline gives the time per output token", "[decode][v4]") {
  const test::Run r = test::simulate(load_scenario(std::string(CPSIM_SOURCE_DIR) + "/scenarios/v4-1m.yaml", {"run.phase=decode"}));
  bool hca_row = false;
  for (const VolumeRow& v : r.metrics.volumes)
    if (v.layer_kind == "swa+hca") {
      hca_row = true;
      CHECK(v.simulated_bytes == 0);  // the seed: V4's decode is local
      CHECK(*v.formula_bytes == 0);
    }
  CHECK(hca_row);
  CHECK(r.metrics.total_bytes[int(Traffic::CP)] == 0);  // CSA with the full write-back moves nothing either
  CHECK_THAT(headline_lines(r.scenario, r.metrics).front(), Catch::Contains("time per output token"));
}
