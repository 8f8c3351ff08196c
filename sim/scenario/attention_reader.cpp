#include "sim/scenario/attention_reader.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workloads/attention_lowering.hpp"

namespace cpsim {
namespace {

bool pattern_uses(const AttentionSpec& a, const std::string& kind) {
  for (const auto& entry : a.pattern)
    for (const auto& part : split_layer_kind(entry))
      if (part == kind) return true;
  return false;
}

}  // namespace

AttentionSpec read_attention(MapReader& r) {
  AttentionSpec a;
  if (r.has("pattern")) {
    const YAML::Node list = r.node("pattern");
    if (!list.IsSequence() || list.size() == 0)
      r.fail("pattern", "expected a non-empty list of layer kinds, e.g. [swa+csa, swa+hca]");
    a.pattern.clear();
    const auto& kinds = attention_kinds();
    for (const auto& item : list) {
      if (!item.IsScalar()) fail_at(item, r.source(), r.path_of("pattern"), "each layer kind must be a name");
      for (const auto& part : split_layer_kind(item.Scalar()))
        if (std::find(kinds.begin(), kinds.end(), part) == kinds.end())
          fail_at(item, r.source(), r.path_of("pattern"),
                  fmt::format("'{}' is not an attention kind (dense, swa, csa, hca, dsa, moba, linear)", part));
      a.pattern.push_back(item.Scalar());
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
  r.finish();
  return a;
}

void read_kind_cp_plans(MapReader& cp, CpPlan& plan) {
  for (const auto& kind : attention_kinds()) {
    if (kind == "dense" || !cp.has(kind)) continue;
    MapReader k = cp.map(kind);
    plan.algorithms[kind] = k.choice_or("algorithm", algorithms_for(kind), default_cp_algorithm(kind));
    if (kind == "moba") {
      const std::string sel = k.choice_or("selection", {"uniform", "recency", "skewed"}, "uniform");
      plan.moba.selection = sel == "recency" ? BlockSelection::RECENCY
                            : sel == "skewed" ? BlockSelection::SKEWED
                                              : BlockSelection::UNIFORM;
      plan.moba.hot_fraction = k.number_or("hot_fraction", plan.moba.hot_fraction);
      if (plan.moba.hot_fraction < 0 || plan.moba.hot_fraction > 1)
        k.fail("hot_fraction", fmt::format("must be between 0 and 1, got {}", plan.moba.hot_fraction));
      plan.moba.hot_rank = static_cast<int>(k.integer_or("hot_rank", 0, 0));
    }
    k.finish();
  }
}

void check_attention_plan(const ModelSpec& m, const RunSpec& run, const ParallelSpec& par, const CpPlan& plan,
                          MapReader& top, const YamlSource& model_source) {
  const AttentionSpec& a = m.attention;
  auto fail_pattern = [&](const std::string& message) {
    // An inline model points at its pattern; a model file at the scenario's `model:` line (named in the message).
    const YAML::Node model = top.self()["model"];
    if (model.IsMap() && model["attention"].IsDefined() && model["attention"].IsMap() &&
        model["attention"]["pattern"].IsDefined())
      fail_at(model["attention"]["pattern"], top.source(), "model.attention.pattern", message);
    fail_at(model, top.source(), "model.attention.pattern", message + " (model file " + model_source.file + ")");
  };
  if (pattern_uses(a, "swa") && m.sliding_window <= 0)
    fail_pattern("swa layers need the model's sliding_window (tokens)");
  const std::uint64_t local_tokens = run.seq_len / par.cp;
  if (pattern_uses(a, "swa") && plan.algorithm("swa") == "boundary" && std::uint64_t(m.sliding_window) > local_tokens)
    fail_pattern(fmt::format("swa/boundary needs sliding_window ({}) <= S/cp ({}): a wider window reaches past the "
                             "left neighbour (use cp.swa.algorithm: allgather)",
                             m.sliding_window, local_tokens));
  auto need_multiple = [&](const char* kind, int unit, const char* what) {
    if (pattern_uses(a, kind) && local_tokens % unit != 0)
      fail_pattern(fmt::format("{} layers need S/cp ({}) to be a multiple of {} ({})", kind, local_tokens, what, unit));
  };
  need_multiple("csa", a.csa_ratio, "csa_ratio");
  need_multiple("hca", a.hca_ratio, "hca_ratio");
  need_multiple("moba", a.moba_block, "moba_block");
  if (pattern_uses(a, "moba") && plan.moba.hot_rank >= par.cp) {
    MapReader cp(top.self()["cp"], top.source(), "cp");
    MapReader moba = cp.map("moba");
    moba.fail("hot_rank", fmt::format("must be a CP rank below cp ({}), got {}", par.cp, plan.moba.hot_rank));
  }
  if (pattern_uses(a, "moba") && a.moba_top_k_blocks > static_cast<int>(run.seq_len / a.moba_block))
    fail_pattern(fmt::format("moba_top_k_blocks ({}) exceeds the number of blocks S/moba_block ({})",
                             a.moba_top_k_blocks, run.seq_len / a.moba_block));
}

}  // namespace cpsim
