#include "sim/scenario/attention_reader.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::string kind_names_text() {
  std::string out;
  for (const auto& k : attention_kinds()) out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

}  // namespace

AttentionSpec read_attention(MapReader& r) {
  AttentionSpec a;
  if (r.has("pattern")) {
    const YAML::Node list = r.node("pattern");
    if (!list.IsSequence() || list.size() == 0)
      r.fail("pattern", "expected a non-empty list of layer kinds, e.g. [swa+csa, swa+hca]");
    a.pattern.clear();
    for (const auto& item : list) {
      if (!item.IsScalar()) fail_at(item, r.source(), r.path_of("pattern"), "each layer kind must be a name");
      std::string unknown;
      const auto kinds = parse_layer_kinds(item.Scalar(), &unknown);
      if (!kinds)
        fail_at(item, r.source(), r.path_of("pattern"),
                fmt::format("'{}' is not an attention kind ({})", unknown, kind_names_text()));
      a.pattern.push_back(*kinds);
    }
  }
  a.csa_ratio = static_cast<int>(r.integer_or("csa_ratio", a.csa_ratio, 1));
  a.hca_ratio = static_cast<int>(r.integer_or("hca_ratio", a.hca_ratio, 1));
  a.csa_top_k = static_cast<int>(r.integer_or("csa_top_k", a.csa_top_k, 1));
  a.dsa_top_k = static_cast<int>(r.integer_or("dsa_top_k", a.dsa_top_k, 1));
  a.indexer_heads = static_cast<int>(r.integer_or("indexer_heads", a.indexer_heads, 1));
  a.indexer_dim = static_cast<int>(r.integer_or("indexer_dim", a.indexer_dim, 1));
  a.moba_block = static_cast<int>(r.integer_or("moba_block", a.moba_block, 1));
  a.moba_top_k_blocks = static_cast<int>(r.integer_or("moba_top_k_blocks", a.moba_top_k_blocks, 1));
  a.linear_chunk = static_cast<int>(r.integer_or("linear_chunk", a.linear_chunk, 1));
  a.ssm_state_dim = static_cast<int>(r.integer_or("ssm_state_dim", a.ssm_state_dim, 1));
  r.finish();
  return a;
}

void read_kind_cp_plans(MapReader& cp, CpPlan& plan) {
  for (const auto& def : attention_kinds()) {
    if (!cp.has(def.name)) continue;
    MapReader block = cp.map(def.name);
    const std::vector<std::string> names = def.algorithm_names();
    const CpAlgorithm algorithm =
        *kCpAlgorithmNames.parse(block.choice_or("algorithm", names, algorithm_name(def.default_algorithm)));
    if (def.kind == AttentionKind::DENSE) plan.dense.algorithm = algorithm, plan.dense.algorithm_given = block.has("algorithm");
    else plan.algorithms[def.kind] = algorithm;
    if (def.read_plan) def.read_plan(block, plan);
    block.finish();
  }
}

void check_attention_plan(const ModelSpec& m, const RunSpec& run, const ParallelSpec& par, const CpPlan& plan,
                          MapReader& top, const YamlSource& model_source) {
  auto fail_pattern = [&](const std::string& message) {
    // An inline model points at its pattern; a model file at the scenario's `model:` line (named in the message).
    const YAML::Node model = top.self()["model"];
    if (model.IsMap() && model["attention"].IsDefined() && model["attention"].IsMap() &&
        model["attention"]["pattern"].IsDefined())
      fail_at(model["attention"]["pattern"], top.source(), "model.attention.pattern", message);
    fail_at(model, top.source(), "model.attention.pattern", message + " (model file " + model_source.file + ")");
  };
  for (const auto& def : attention_kinds()) {
    if (!def.check || !m.uses(def.kind)) continue;
    auto fail_plan = [&](const std::string& key, const std::string& message) {
      MapReader cp(top.self()["cp"], top.source(), "cp");
      MapReader block = cp.map(def.name);
      block.fail(key, message);
    };
    def.check(KindCheck{m, run, par, plan, fail_pattern, fail_plan});
  }
}

}  // namespace cpsim
