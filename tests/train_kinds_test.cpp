// Training (forward + backward) for the non-dense kinds (workloads/attention/kinds_backward.cpp): per layer, the CP
// bytes each rank receives in the forward and in the backward equal the modes' closed forms. Oracle: the backward
// pattern of each mode (the forward replayed, then the gathered KV's gradients returned) and the byte counts
// derived beside each assertion. One layer of Llama-3-8B's shape (GQA: c_kv = 2 x 8 x 128 x 2 B = 4 KiB per token),
// S = 32K on 4 GPUs of one node, the ideal machine.
#include <catch2/catch.hpp>

#include <map>

#include "support.hpp"

using namespace cpsim;

namespace {

const char* kTrain = R"(
name: train-kinds
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 4, calibration: ideal}
model: {name: small, layers: 1, d_model: 4096, n_heads: 32, n_kv_heads: 8, head_dim: 128, ffn_dim: 14336,
        vocab: 128256, sliding_window: 4096, attention: {pattern: [dense]}}
run: {phase: train, seq_len: 32K, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
)";
constexpr double kCkv = 4096, kLocal = 8192;  // bytes per token; tokens per rank

// Simulated bytes per row label ("swa / boundary-backward"), checked against the row's closed form.
std::map<std::string, double> rows(const test::Run& r) {
  std::map<std::string, double> out;
  for (const VolumeRow& v : r.metrics.volumes) {
    INFO(v.layer_kind << " / " << v.cp_algorithm << ": " << v.formula);
    REQUIRE(v.formula_bytes);
    CHECK(v.simulated_bytes == *v.formula_bytes);
    out[v.layer_kind + " / " + v.cp_algorithm] = v.simulated_bytes;
  }
  return out;
}

test::Run train(const std::vector<std::string>& sets) { return test::simulate(test::scenario_from(kTrain, sets)); }

}  // namespace

TEST_CASE("train swa boundary: the window again, then its gradients back to the left neighbour", "[train][swa]") {
  const auto b = rows(train({"model.attention.pattern=[swa]"}));
  // Forward: 4096 tokens x 4 KiB from the left neighbour. Backward: the same again, plus the dK, dV of a middle
  // rank's last 4096 tokens from its right neighbour.
  CHECK(b.at("swa / boundary") == 4096 * kCkv);
  CHECK(b.at("swa / boundary-backward") == 2 * 4096 * kCkv);
}

TEST_CASE("train swa allgather: AllGather again and a reduce-scatter of dK, dV", "[train][swa]") {
  const auto b = rows(train({"model.attention.pattern=[swa]", "cp.swa.algorithm=allgather"}));
  CHECK(b.at("swa / allgather") == 3 * kLocal * kCkv);  // (N-1)/N * S * c_kv
  CHECK(b.at("swa / allgather-backward") == 2 * 3 * kLocal * kCkv);
}

TEST_CASE("train hca local: no CP traffic, the step is each GPU's kernels", "[train][hca]") {
  const test::Run r = train({"model.attention.pattern=[hca]", "parallel.grad_sync=none"});
  const auto b = rows(r);
  CHECK(b.at("hca / local") == 0);
  CHECK(b.at("hca / local-backward") == 0);
  // tp 1, no CP flows, no gradient sync (the CP ranks' weight gradients would all-reduce): each GPU runs alone; the step is the longest GPU's kernels in sequence.
  double longest = 0;
  std::vector<double> busy(4, 0);
  for (const Task& t : r.graph.all_tasks()) {
    REQUIRE(t.kind == TaskKind::COMPUTE);
    busy[t.gpu] += t.duration_s;
  }
  for (double s : busy) longest = std::max(longest, s);
  CHECK(r.metrics.makespan_s == Approx(longest).epsilon(1e-9));
}

TEST_CASE("train csa allgather: compressed KV again and its gradients reduce-scattered", "[train][csa]") {
  const auto b = rows(train({"model.attention.pattern=[csa]"}));
  CHECK(b.at("csa / allgather") == 3 * kLocal / 4 * kCkv);  // (N-1)/N * S/4 * c_kv
  CHECK(b.at("csa / allgather-backward") == 2 * 3 * kLocal / 4 * kCkv);
}

TEST_CASE("train dsa allgather: the written-back KV is kept, gradients reduce-scattered", "[train][dsa]") {
  const auto b = rows(train({"model.attention.pattern=[dsa]"}));
  // Forward: KV latent + hidden states, (N-1) x 8192 x (4 KiB + 4096 x 2 B); backward: their reduce-scatters.
  CHECK(b.at("dsa / allgather") == 3 * kLocal * (kCkv + 4096 * 2));
  CHECK(b.at("dsa / allgather-backward") == 3 * kLocal * (kCkv + 4096 * 2));
}

TEST_CASE("train linear lasp1: the state chain forward and backward, 2(N-1) serial hops", "[train][linear]") {
  const test::Run r = train({"model.attention.pattern=[linear]", "cp.linear.algorithm=lasp1"});
  const auto b = rows(r);
  CHECK(b.at("linear / lasp1") == 32 * 128 * 128 * 2);  // one [H, d, d] state from the left neighbour
  CHECK(b.at("linear / lasp1-backward") == 32 * 128 * 128 * 2);
  int hops = 0;
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::FLOW && r.graph.name(t.name) == "lasp1 state") ++hops;
  CHECK(hops == 2 * 3);
}

TEST_CASE("train lasp2h: the hybrid's softmax layers AllGather KV, its linear layers states, both ways",
          "[train][linear]") {
  const auto b = rows(train({"model.attention.pattern=[linear, dense]", "model.layers=2", "cp.linear.algorithm=lasp2h"}));
  CHECK(b.at("linear / lasp2h") == 3 * 32 * 128 * 128 * 2);  // (N-1) states
  CHECK(b.at("linear / lasp2h-backward") == 3 * 32 * 128 * 128 * 2);
  CHECK(b.at("dense / allgather-backward") == 2 * 3 * kLocal * kCkv);
}

TEST_CASE("train ssm lasp2: the [H, N, d] state AllGather forward and backward", "[train][ssm]") {
  const auto b = rows(train({"model.attention.pattern=[ssm]", "model.attention.ssm_state_dim=64"}));
  CHECK(b.at("ssm / lasp2") == 3 * 32 * 64 * 128 * 2);
  CHECK(b.at("ssm / lasp2-backward") == 3 * 32 * 64 * 128 * 2);
}

TEST_CASE("train usp: the Ulysses all-to-alls again, the ring backward across the groups", "[train][usp]") {
  const auto b = rows(train({"cp.dense.algorithm=usp", "cp.dense.ulysses_degree=2"}));
  // N = 4, u = 2: r = 2 rings. All-to-all: (u-1) * 8192 tokens * 128 * 2 B * (2*32/2 + 2*8/2) = 80 MiB. Ring block:
  // S/r = 16384 tokens x 2 * (8/2) * 128 * 2 B = 32 MiB; forward (r-1) blocks, backward 2(r-1) + 1 (dK, dV home).
  const double a2a = 8192.0 * 128 * 2 * 40, block = 16384.0 * 2 * 4 * 128 * 2;
  CHECK(b.at("dense / usp") == a2a + block);
  CHECK(b.at("dense / usp-backward") == a2a + 3 * block);
}

TEST_CASE("train dsa select-gather: the selection again, then the gathered entries' dK, dV back", "[train][dsa]") {
  const auto b = rows(train({"model.attention.pattern=[dsa]", "cp.dsa.algorithm=select-gather"}));
  // k = 2048 selections spread over the 4 owners (512 each): 1536 remote; the top-k merge sends k (index + score,
  // 8 B) to each of the N-1 others. The backward adds the 3 x 512 entries' gradients every owner gets back.
  const double merge = 3 * 2048 * 8, gather = 1536 * kCkv;
  CHECK(b.at("dsa / select-gather") == merge + gather);
  CHECK(b.at("dsa / select-gather-backward") == merge + 2 * gather);
}

TEST_CASE("train moba: the block gather again, then the blocks' gradients back to their owners", "[train][moba]") {
  const test::Run r = train({"model.attention.pattern=[moba]"});
  const auto b = rows(r);
  // Uniform selection is symmetric: every rank returns as many blocks as it is sent, so the backward receives the
  // forward's traffic plus its block gather once more.
  const double centroids = 3.0 * 8192 / 512 * 1024 * 2;  // (N-1) * L / B_blk centroids of d_kv = 1024, bf16
  CHECK(b.at("moba / gather-backward") == 2 * b.at("moba / gather") - centroids);
}
