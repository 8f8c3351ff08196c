// Sliding-window attention: each rank needs only the window left of its block (boundary P2P from the left
// neighbour), or, under a round-robin partition, an AllGather (heterogeneous-attention-cp.md, SWA).
#include <fmt/format.h>

#include "workloads/attention/block_selection.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {
namespace {

std::optional<ModeVolume> boundary_volume(const CommParams& p, const MobaCpPlan&) {
  const double n = p.N, ckv = p.c_kv();
  ModeVolume v;
  v.primitive = "P2P from the left neighbour";
  v.bytes = p.B * std::min(p.n_win, p.S / n) * ckv;
  v.formula = fmt::format("B * min(n_win, S/N) * c_kv  [{}, n_win={}, c_kv={}]", common_params_text(p), p.n_win, ckv);
  v.seed_bytes = v.bytes;
  v.seed_formula = "min(n_win, S/N) * 2*d_kv*s";
  v.note = "rank 0 receives nothing; contiguous partition";
  return v;
}

std::optional<ModeVolume> allgather_volume(const CommParams& p, const MobaCpPlan&) {
  ModeVolume v = kv_allgather_volume(p);
  v.note = "round-robin partition: every rank's windows cover the whole sequence, so SWA needs all remote KV";
  return v;
}

// Decode: the token on the tail rank, which holds S/N cached tokens (the step's window is largest on the last step,
// the remote part of a boundary window on the first).
std::optional<ModeVolume> boundary_decode_volume(const CommParams& p, const MobaCpPlan&) {
  const double ckv = p.c_kv(), remote = p.N > 1 ? std::max(0.0, std::min(p.n_win, p.S + 1) - (p.S / p.N + 1)) : 0;
  ModeVolume v;
  v.primitive = "P2P from the left neighbour when the window reaches past the tail rank's tokens";
  v.bytes = p.B * remote * ckv;
  v.formula = fmt::format("B * max(0, min(n_win, S+1) - (S/N + 1)) * c_kv  [{}, n_win={}, c_kv={}]",
                          common_params_text(p), p.n_win, ckv);
  v.note = "per decode step; 0 while n_win <= S/N: the window is local";
  return v;
}
std::optional<ModeVolume> allgather_decode_volume(const CommParams& p, const MobaCpPlan&) {
  const int n = static_cast<int>(p.N), w = static_cast<int>(std::min(p.n_win, decode_context_max(p)));
  const double remote = w - selections_per_owner(w, n, n - 1, MobaCpPlan{})[n - 1];
  ModeVolume v;
  v.primitive = "the window's KV from every rank to the tail (round-robin: n_win/N each)";
  v.bytes = p.B * remote * p.c_kv();
  v.formula = fmt::format("B * (w - w_tail) * c_kv, w = min(n_win, S + new_tokens)  [{}, w={}, w_tail={}, c_kv={}]",
                          common_params_text(p), w, w - remote, p.c_kv());
  v.note = "per decode step (the last step's window)";
  return v;
}

std::optional<ModeVolume> boundary_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  ModeVolume v = *boundary_volume(p, m);
  // A middle rank receives its window again and the dK, dV of its own last n_win tokens from its right neighbour.
  const double times = p.N > 2 ? 2 : 1;
  return backward_of(v, times, "the window's K, V from the left neighbour again + its dK, dV back to it");
}
std::optional<ModeVolume> allgather_backward_volume(const CommParams& p, const MobaCpPlan& m) {
  return backward_of(*allgather_volume(p, m), 2, "AllGather of K, V again + reduce-scatter of dK, dV");
}

void check_swa(const KindCheck& c) {
  if (c.model.sliding_window <= 0) c.fail_pattern("swa layers need the model's sliding_window (tokens)");
  const std::uint64_t local_tokens = c.run.seq_len / c.parallel.cp;
  if (c.plan.algorithm(AttentionKind::SWA) == CpAlgorithm::BOUNDARY &&
      std::uint64_t(c.model.sliding_window) > local_tokens)
    c.fail_pattern(fmt::format("swa/boundary needs sliding_window ({}) <= S/cp ({}): a wider window reaches past "
                               "the left neighbour (use cp.swa.algorithm: allgather)",
                               c.model.sliding_window, local_tokens));
}

}  // namespace

AttentionKindDef swa_attention_kind() {
  AttentionKindDef k;
  k.name = "swa";
  k.description = "sliding-window attention (model.sliding_window)";
  k.default_algorithm = CpAlgorithm::BOUNDARY;
  k.modes = {{.algorithm = CpAlgorithm::BOUNDARY, .forward = lower_swa_boundary, .backward = lower_swa_boundary_backward,
              .volume = boundary_volume, .backward_volume = boundary_backward_volume,
              .decode = decode_swa_boundary, .decode_volume = boundary_decode_volume},
             {.algorithm = CpAlgorithm::ALLGATHER, .forward = lower_swa_allgather, .backward = lower_swa_allgather_backward,
              .volume = allgather_volume, .backward_volume = allgather_backward_volume,
              .decode = decode_swa_allgather, .decode_volume = allgather_decode_volume}};
  k.check = check_swa;
  // boundary needs contiguous ranks; allgather is the round-robin route (token t on rank t mod N).
  k.token_layout = [](const CpPlan& plan) {
    return plan.algorithm(AttentionKind::SWA) == CpAlgorithm::ALLGATHER ? Partition::STRIPED : Partition::CONTIGUOUS;
  };
  return k;
}

}  // namespace cpsim
