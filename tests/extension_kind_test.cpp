// Adding an attention kind is one registered value (docs/extending.md): a toy kind registered here, with no other
// change to cpsim, must load from YAML, lower, simulate, and show up in the summary and in `volumes`.
// Oracle: the toy's own closed form, (N-1)/N * B*S * c_kv / 2 (an AllGather of the keys only), evaluated by hand.
#include <catch2/catch.hpp>

#include "sim/report/summary_writer.hpp"
#include "sim/report/volume_table.hpp"
#include "support.hpp"
#include "workloads/attention/registry.hpp"
#include "workloads/cp_group_lowering.hpp"

using namespace cpsim;

namespace {

// Keys-only AllGather, then one attention kernel over every key (costed as the dense blocks).
RankTasks lower_toy(LayerContext& ctx, const RankTasks& entry) {
  const double keys_bytes = ctx.shape.tokens * kv_token_bytes(ctx) / 2;
  return for_each_cp_group(ctx, entry, [&](const std::vector<int>& gpus, const RankTasks& in) {
    const int n = static_cast<int>(gpus.size());
    const RankTasks keys = allgather(ctx.graph, gpus, keys_bytes, {Traffic::CP, "toy keys allgather", ctx.layer}, in);
    RankTasks done(n);
    for (int q = 0; q < n; ++q) {
      KernelCost total;
      for (int k = 0; k < n; ++k) {
        const KernelCost c = dense_attention_block(ctx, q, k);
        total = {total.duration_s + c.duration_s, total.flops + c.flops, total.hbm_bytes + c.hbm_bytes};
      }
      done[q] = keys[q];
      done[q].push_back(add_kernel(ctx, gpus[q], "toy attention", 0, total, keys[q]));
    }
    return done;
  });
}

std::optional<ModeVolume> toy_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v;
  v.primitive = "AllGather of keys";
  v.bytes = (p.N - 1) / p.N * p.B * p.S * p.c_kv() / 2;
  v.formula = "(N-1)/N * B*S * c_kv/2";
  return v;
}

AttentionKind toy_kind() {
  static const AttentionKind kind = [] {
    AttentionKindDef k;
    k.name = "toy";
    k.description = "toy keys-only attention";
    k.default_algorithm = CpAlgorithm::ALLGATHER;
    k.modes = {{.algorithm = CpAlgorithm::ALLGATHER, .forward = lower_toy, .volume = toy_volume}};
    return register_attention_kind(k);
  }();
  return kind;
}

const char* kToyScenario = R"(
name: toy
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 4, calibration: ideal}
model: {name: toy-8b, layers: 2, d_model: 4096, n_heads: 32, n_kv_heads: 8, head_dim: 128, ffn_dim: 14336,
        vocab: 128256, attention: {pattern: [toy]}}
run: {phase: prefill, seq_len: 32K, batch: 1, dtype: bf16}
parallel: {cp: 4, tp: 1}
cp: {toy: {algorithm: allgather}}
)";

// N = 4, S = 32768, c_kv = 2 * 1024 * 2 B: 3/4 * 32768 * 4096 / 2.
constexpr double kToyBytes = 50331648.0;

}  // namespace

TEST_CASE("extension: a registered toy kind runs through load, run, summary and volumes", "[extension]") {
  const AttentionKind toy = toy_kind();
  CHECK(kind_name(toy) == std::string("toy"));
  CHECK(!is_builtin(toy));

  const test::Run r = test::simulate(test::scenario_from(kToyScenario));
  REQUIRE(r.scenario.model.layer_kind(0) == LayerKinds{toy});
  CHECK(r.scenario.cp.algorithm(toy) == CpAlgorithm::ALLGATHER);

  // The simulated AllGather moves exactly the toy's closed form, and the summary pairs the two.
  REQUIRE(r.metrics.volumes.size() == 1u);
  const VolumeRow& v = r.metrics.volumes[0];
  CHECK(v.layer_kind == "toy");
  CHECK(v.cp_algorithm == "allgather");
  CHECK(v.simulated_bytes == kToyBytes);
  REQUIRE(v.formula_bytes);
  CHECK(*v.formula_bytes == kToyBytes);
  CHECK(r.metrics.makespan_s > 0);

  const auto summary = summary_json(r.scenario, r.metrics, nullptr);
  CHECK(summary["scenario"]["cp"]["toy"]["algorithm"] == "allgather");
  CHECK(summary["by_layer_kind"][0]["layer_kind"] == "toy");
  CHECK(summary["scenario"]["model"]["attention"]["pattern"][0] == "toy");

  // `volumes` lists the registered kind's mode after the seed's rows.
  const VolumeTable t = volume_table("seed", volume_preset_params("seed"));
  const auto& last = t.rows.back();
  CHECK(last.volume.kind == toy);
  CHECK(last.volume.bytes == 3.0 / 4 * 131072 * 2048 / 2);  // the seed preset: N=4, S=128K, c_kv=2 KiB
}

TEST_CASE("extension: the toy kind's algorithms and phases come from its registration", "[extension]") {
  toy_kind();
  CHECK_THROWS_WITH(test::scenario_from(kToyScenario, {"cp.toy.algorithm=ring"}),
                    Catch::Contains("cp.toy.algorithm: 'ring' is not one of: allgather"));
  // No backward lowering registered: training refuses the kind, naming the kinds it models.
  CHECK_THROWS_WITH(test::scenario_from(kToyScenario, {"run.phase=train"}),
                    Catch::Contains("training is modelled for dense, swa, csa, hca, dsa, moba, linear, ssm layers only; the model has toy layers"));
  CHECK_THROWS_AS(register_attention_kind(attention_kind(toy_kind())), std::logic_error);  // one name, one kind
}
