// Traffic beside CP in MoE and TP layers: EP all-to-all dispatch/combine bytes under uniform and skewed routing,
// the expert work that follows the routing, and sequence parallelism's all-gather + reduce-scatter. Oracles: the
// routing rules of workloads/expert_routing.hpp and the collective volumes, derived by hand beside each check.
#include <catch2/catch.hpp>

#include <set>

#include "support.hpp"
#include "workloads/expert_routing.hpp"

using namespace cpsim;

namespace {

// DeepSeek-V3.2 trunk (d_model 7168, top-8 routed + 1 shared expert of width 2048), one MoE layer, two nodes:
// TP 8 in a node, CP 2 across, experts over all 16 GPUs.
const char* kMoe = R"(
name: moe
platform: {preset: hgx-h100, nodes: 2, gpus_per_node: 8, calibration: ideal}
model: models/deepseek-v3.2.yaml
run: {phase: prefill, seq_len: 16K, batch: 1, dtype: bf16}
parallel: {cp: 2, tp: 8, ep: 16}
cp: {dense: {algorithm: ring}}
)";
const std::vector<std::string> kOneMoeLayer = {"model.layers=1", "model.moe.first_dense_layers=0",
                                                "model.attention.pattern=[dense]"};

// Routed bytes of one GPU: its 1/tp share of T = 8192 tokens, top-8 copies of d_model bf16.
constexpr double R = 8192.0 / 8 * 8 * 7168 * 2;

double ep_sent(const test::Run& r, int gpu) {
  return r.metrics.ranks[gpu].bytes_sent[static_cast<std::size_t>(Traffic::EP)];
}

double ffn_flops(const test::Run& r, int gpu) {
  for (const Task& t : r.graph.all_tasks())
    if (t.kind == TaskKind::COMPUTE && t.gpu == gpu && r.graph.name(t.name) == "ffn") return t.flops;
  return 0;
}

}  // namespace

TEST_CASE("moe: skewed routing shares and the capacity cap", "[moe][oracle]") {
  ParallelSpec p;
  p.cp = 2, p.tp = 8, p.ep = 16;
  CHECK(expert_routing(p).share[3] == 1.0 / 16);  // uniform
  p.ep_hot_share = 0.25;
  ExpertRouting r = expert_routing(p);
  CHECK(r.share[0] == 0.25);
  CHECK(r.share[1] == Approx(0.75 / 15).epsilon(1e-15));
  CHECK(r.load_factor(0) == 4);  // 16 x 0.25: the hot rank runs 4x the uniform expert work
  p.ep_capacity_factor = 1.5;    // cap: 1.5 / 16 of the routed copies per rank, the rest of the hot share dropped
  r = expert_routing(p);
  CHECK(r.share[0] == 1.5 / 16);
  CHECK(r.dropped_share == Approx(0.25 - 1.5 / 16).epsilon(1e-15));
  CHECK(r.share[1] == Approx(0.75 / 15).epsilon(1e-15));  // the others keep theirs
}

TEST_CASE("moe: uniform EP over 16 GPUs sends R/16 to every peer, twice", "[moe][oracle]") {
  const test::Run r = test::simulate(test::scenario_from(kMoe, kOneMoeLayer));
  // Dispatch: R/16 to each of 15 peers; combine: the same back. Every GPU alike.
  for (int gpu : {0, 7, 8, 15}) CHECK(ep_sent(r, gpu) == 2 * 15 * (R / 16));
  CHECK(r.metrics.total_bytes[static_cast<std::size_t>(Traffic::EP)] == 16 * 2 * 15 * (R / 16));
}

TEST_CASE("moe: skewed routing loads the hot rank's links and experts", "[moe][oracle]") {
  std::vector<std::string> set = kOneMoeLayer;
  set.push_back("parallel.ep_hot_share=0.25");
  const test::Run r = test::simulate(test::scenario_from(kMoe, set));
  // GPU 0 (hot) dispatches 0.05 R to each of 15 peers and combines 0.25 R back to each: 0.75 R + 3.75 R.
  CHECK(ep_sent(r, 0) == Approx(15 * (0.75 / 15) * R + 15 * 0.25 * R).epsilon(1e-12));
  // GPU 1 dispatches 0.25 R to GPU 0 and 0.05 R to 14 others, combines 0.05 R to 15: 0.25 + 0.7 + 0.75 = 1.7 R.
  CHECK(ep_sent(r, 1) == Approx(1.7 * R).epsilon(1e-12));
  // Expert GEMMs: (load x 8 routed + 1 shared) x 2048 / tp wide; hot load 4, others 16 x 0.05 = 0.8.
  CHECK(ffn_flops(r, 0) / ffn_flops(r, 1) == Approx((4 * 8 + 1) / (0.8 * 8 + 1)).epsilon(1e-12));
  // The hot rank is the straggler: the most compute-busy GPU.
  CHECK(r.metrics.ranks[0].compute_busy_s > r.metrics.ranks[1].compute_busy_s);
}

TEST_CASE("moe: sequence parallelism replaces each all-reduce by a reduce-scatter and an all-gather", "[moe][tp]") {
  // Dense llama3-8b, TP 4 x CP 2 on one node, 2 layers. Ring all-reduce: 2 (n-1)/n T d s per rank; SP: reduce-
  // scatter + all-gather, (n-1)/n T d s each, so the same bytes: 2 layers x 2 syncs x 2 x 3/4 x 8192 x 4096 x 2.
  const std::vector<std::string> base = {"parallel.cp=2", "parallel.tp=4", "model.layers=2", "run.seq_len=16K"};
  std::vector<std::string> sp = base;
  sp.push_back("parallel.sequence_parallel=true");
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario, sp));
  const double tds = 8192.0 * 4096 * 2;
  for (int gpu = 0; gpu < 8; ++gpu)
    CHECK(r.metrics.ranks[gpu].bytes_sent[static_cast<std::size_t>(Traffic::TP)] == 2 * 2 * 2 * 0.75 * tds);
  std::set<std::string> names;
  for (const Task& t : r.graph.all_tasks())
    if (t.traffic == Traffic::TP) names.insert(r.graph.name(t.name));
  CHECK(names == std::set<std::string>{"tp allgather attn", "tp reducescatter attn", "tp allgather ffn",
                                       "tp reducescatter ffn"});
}
