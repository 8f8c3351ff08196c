#include "workloads/attention/closed_form.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workloads/attention/block_selection.hpp"

namespace cpsim {

std::string common_params_text(const CommParams& p) {
  return fmt::format("N={}, B={}, S={}, s={}", p.N, p.B, p.S, p.s);
}

double max_remote_selections(int k, int n, const MobaCpPlan& plan) {
  int worst = 0;
  for (int q = 0; q < n; ++q) {
    const auto owners = selections_per_owner(k, n, q, plan);
    worst = std::max(worst, k - owners[q]);
  }
  return worst;
}

double max_remote_selections_and_returns(int k, int n, const MobaCpPlan& plan) {
  std::vector<std::vector<int>> owners;
  for (int q = 0; q < n; ++q) owners.push_back(selections_per_owner(k, n, q, plan));
  int worst = 0;
  for (int r = 0; r < n; ++r) {
    int received = k - owners[r][r];
    for (int q = 0; q < n; ++q)
      if (q != r) received += owners[q][r];
    worst = std::max(worst, received);
  }
  return worst;
}

const char* selection_name(BlockSelection s) { return kBlockSelectionNames.name(s); }

}  // namespace cpsim

namespace cpsim {

ModeVolume compressed_allgather_volume(const CommParams& p, double ratio) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  ModeVolume v;
  v.primitive = "AllGather of compressed KV";
  v.bytes = (n - 1) * local / ratio * ckv;
  v.formula = fmt::format("(N-1)/N * B*S/m * c_kv  [{}, m={}, c_kv={}]", common_params_text(p), ratio, ckv);
  v.seed_bytes = v.bytes;
  v.seed_formula = "(N-1)/N * S/m * 2*d_c*s";
  return v;
}

ModeVolume backward_of(ModeVolume forward, double times, const std::string& primitive) {
  forward.bytes *= times;
  if (times != 1) forward.formula = fmt::format("{:g} x ({})", times, forward.formula);
  forward.primitive = primitive;
  forward.seed_bytes.reset();
  forward.seed_formula.clear();
  forward.note = "training backward";
  return forward;
}

ModeVolume kv_allgather_volume(const CommParams& p) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;
  ModeVolume v;
  v.primitive = "AllGather";
  v.bytes = (n - 1) * local * ckv;
  v.formula = fmt::format("(N-1)/N * B*S * c_kv  [{}, c_kv={}]", common_params_text(p), ckv);
  return v;
}

ModeVolume select_gather_backward_volume(const CommParams& p, double k, bool exact) {
  ModeVolume v = select_gather_volume(p, k, exact);
  const double n = p.N, ckv = p.c_kv();
  const double remote = max_remote_selections(static_cast<int>(k), static_cast<int>(n), MobaCpPlan{});
  const double both = max_remote_selections_and_returns(static_cast<int>(k), static_cast<int>(n), MobaCpPlan{});
  v.bytes += p.B * (both - remote) * ckv;
  v.primitive += " again + dK, dV of the gathered entries back to their owners";
  v.formula = fmt::format("forward with k_remote -> k_remote + k_returned = {} (uniform)  [{}]", both, v.formula);
  v.seed_bytes.reset();
  v.seed_formula.clear();
  return v;
}

ModeVolume select_gather_volume(const CommParams& p, double k, bool exact) {
  const double n = p.N, ckv = p.c_kv();
  const double remote = max_remote_selections(static_cast<int>(k), static_cast<int>(n), MobaCpPlan{});
  const double queries = exact ? (n - 1) * p.B * p.S / n * p.indexer_heads * p.indexer_dim : 0;
  ModeVolume v;
  v.primitive = exact ? "indexer query AllGather + per-rank top-k (index+score) + sparse gather"
                      : "top-k merge (index+score) + sparse gather";
  v.bytes = queries + p.B * ((n - 1) * k * kTopkEntryBytes + remote * ckv);
  v.formula = fmt::format("{}B * ((N-1)*k*8 + k_remote*c_kv)  [{}, k={}, k_remote={} (uniform), c_kv={}{}]",
                          exact ? "(N-1)/N * B*S * h_I*d_I + " : "", common_params_text(p), k, remote, ckv,
                          exact ? fmt::format(", h_I={}, d_I={}", p.indexer_heads, p.indexer_dim) : "");
  v.seed_bytes = p.B * k * ckv;
  v.seed_formula = "k * c_kv";
  v.note = std::string("the seed counts k*c_kv (all k selections, local ones included) and leaves out the top-k "
                       "merge; ") +
           (exact ? "exact: the queries are scored against every rank's keys"
                  : "approximate: each rank scores only its local keys (cp.<kind>.exact: true for the exact top-k)");
  v.exact = exact;
  return v;
}

}  // namespace cpsim
