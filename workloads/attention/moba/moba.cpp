// MoBA block-sparse attention: a gate scores block centroids (AllGather of centroids), each query attends its
// top-k blocks, gathered from their owners. Where the selected blocks live is `cp.moba.selection`.
#include <cmath>
#include <fmt/format.h>

#include "sim/scenario/yaml_reader.hpp"
#include "workloads/attention/block_selection.hpp"
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

// Training's backward: the forward again, then the selected blocks' dK, dV back to their owners.
std::optional<ModeVolume> gather_backward_volume(const CommParams& p, const MobaCpPlan& selection) {
  ModeVolume v = *gather_volume(p, selection);
  const int k = static_cast<int>(p.moba_top_k_blocks), n = static_cast<int>(p.N);
  const double remote = max_remote_selections(k, n, selection), both = max_remote_selections_and_returns(k, n, selection);
  v.bytes += p.B * (both - remote) * p.moba_block * p.c_kv();
  v.primitive = "centroid AllGather + block gather again + blocks' dK, dV back to their owners";
  v.formula = fmt::format("forward with k_remote -> k_remote + k_returned = {} ({})  [{}]", both,
                          selection_name(selection.selection), v.formula);
  v.seed_bytes.reset();
  v.seed_formula.clear();
  v.note.clear();
  return v;
}

// Decode: the tail rank receives its selected remote blocks; each owner receives the indices it must serve.
std::optional<ModeVolume> gather_decode_volume(const CommParams& p, const MobaCpPlan& selection) {
  const int n = static_cast<int>(p.N), home = n - 1;
  const double blocks = std::floor((decode_context_max(p) - 1) / p.moba_block);
  const int k = static_cast<int>(std::min(p.moba_top_k_blocks, blocks));
  const std::vector<int> owners = selections_per_owner(k, n, home, selection);
  int owned = 0;
  for (int o = 0; o < home; ++o) owned = std::max(owned, owners[o]);
  const double remote = k - owners[home];
  ModeVolume v;
  v.primitive = "block indices out, selected blocks' KV in";
  v.bytes = std::max(p.B * remote * p.moba_block * p.c_kv(), p.B * owned * kIndexBytes);
  v.formula = fmt::format("max(tail: B * k_remote*B_blk*c_kv, owner: B * k_o*4)  [{}, B_blk={}, k={}, k_remote={} ({}), "
                          "k_o<={}, c_kv={}]",
                          common_params_text(p), p.moba_block, k, remote, selection_name(selection.selection), owned,
                          p.c_kv());
  v.note = "per decode step; the gate reads the centroids every rank holds since the prefill";
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
  k.modes = {{.algorithm = CpAlgorithm::GATHER, .forward = lower_moba_gather, .backward = lower_moba_gather_backward,
              .volume = gather_volume, .backward_volume = gather_backward_volume, .decode = decode_moba_gather, .decode_volume = gather_decode_volume}};
  k.read_plan = read_moba_plan;
  k.check = check_moba;
  return k;
}

}  // namespace cpsim
