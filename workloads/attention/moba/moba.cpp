// MoBA block-sparse attention: a gate scores block centroids (AllGather of centroids), each query attends its
// top-k blocks, gathered from their owners. Where the selected blocks live is `cp.moba.selection`.
#include <fmt/format.h>

#include "sim/scenario/yaml_reader.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> gather_volume(const CommParams& p, const MobaCpPlan& selection) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n, k = p.moba_top_k_blocks;
  const double remote = max_remote_selections(static_cast<int>(k), static_cast<int>(n), selection);
  ModeVolume v;
  v.primitive = "centroid AllGather + block gather";
  v.bytes = (n - 1) * local / p.moba_block * p.gate_width * p.s + p.B * remote * p.moba_block * ckv;
  v.formula = fmt::format(
      "(N-1)/N * B*S/B_blk * d_gate*s + B * k_remote*B_blk*c_kv  [{}, B_blk={}, d_gate={}, k_block={}, "
      "k_remote={} ({}), c_kv={}]",
      common_params_text(p), p.moba_block, p.gate_width, k, remote, selection_name(selection.selection), ckv);
  v.seed_bytes = k * p.moba_block * ckv + (n - 1) * local / p.moba_block * p.gate_width * p.s;
  v.seed_formula = "k_block * B_blk * c_kv + (N-1)/N * S/B_blk * d_kv*s";
  v.note = "the seed counts k_block*B_blk*c_kv (all selected blocks, local ones included)";
  return v;
}

void read_moba_plan(MapReader& k, CpPlan& plan) {
  plan.moba.selection = k.choice_or("selection", kBlockSelectionNames, BlockSelection::UNIFORM);
  plan.moba.hot_fraction = k.number_or("hot_fraction", plan.moba.hot_fraction);
  if (plan.moba.hot_fraction < 0 || plan.moba.hot_fraction > 1)
    k.fail("hot_fraction", fmt::format("must be between 0 and 1, got {}", plan.moba.hot_fraction));
  plan.moba.hot_rank = static_cast<int>(k.integer_or("hot_rank", 0, 0));
}

void check_moba(const KindCheck& c) {
  const AttentionSpec& a = c.model.attention;
  require_local_multiple(c, AttentionKind::MOBA, a.moba_block, "moba_block");
  if (c.plan.moba.hot_rank >= c.parallel.cp)
    c.fail_plan("hot_rank", fmt::format("must be a CP rank below cp ({}), got {}", c.parallel.cp, c.plan.moba.hot_rank));
  if (a.moba_top_k_blocks > static_cast<int>(c.run.seq_len / a.moba_block))
    c.fail_pattern(fmt::format("moba_top_k_blocks ({}) exceeds the number of blocks S/moba_block ({})",
                               a.moba_top_k_blocks, c.run.seq_len / a.moba_block));
}

}  // namespace

AttentionKindDef moba_attention_kind() {
  AttentionKindDef k;
  k.name = "moba";
  k.description = "MoBA block-sparse attention (moba_block, moba_top_k_blocks)";
  k.default_algorithm = CpAlgorithm::GATHER;
  k.modes = {{CpAlgorithm::GATHER, lower_moba_gather, nullptr, false, true, gather_volume}};
  k.read_plan = read_moba_plan;
  k.check = check_moba;
  return k;
}

}  // namespace cpsim
