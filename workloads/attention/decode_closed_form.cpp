// Closed forms shared by the decode modes of several kinds (closed_form.hpp): no traffic, and exact
// select-then-gather for one token (CSA, DSA).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "workloads/attention/block_selection.hpp"
#include "workloads/attention/closed_form.hpp"

namespace cpsim {

double decode_context_max(const CommParams& p) { return p.S + p.new_tokens; }

std::optional<ModeVolume> no_decode_traffic(const CommParams&, const MobaCpPlan&) {
  ModeVolume v;
  v.primitive = "none (the step runs on the GPU holding the token's state)";
  v.formula = "0";
  v.note = "per decode step";
  return v;
}

DecodeSelection decode_selection(double k, double entries, int n, int home) {
  DecodeSelection sel;
  sel.k = static_cast<int>(std::min(k, std::floor(entries)));
  sel.candidates = std::min(sel.k, static_cast<int>(std::floor(entries / n)));
  sel.owners = selections_per_owner(sel.k, n, home, MobaCpPlan{});
  return sel;
}

ModeVolume select_gather_decode_volume(const CommParams& p, double k, double ratio) {
  const int n = static_cast<int>(p.N), home = n - 1;
  const double ckv = p.c_kv(), entries = std::floor(decode_context_max(p) / ratio);
  const DecodeSelection sel = decode_selection(k, entries, n, home);
  const double remote = sel.k - sel.owners[home];
  const double home_bytes = p.B * ((n - 1) * sel.candidates * kTopkEntryBytes + remote * ckv);
  int owned = 0;  // the most selections one other rank serves: its request is the largest
  for (int o = 0; o < home; ++o) owned = std::max(owned, sel.owners[o]);
  const double owner_bytes = n > 1 ? p.B * (p.indexer_heads * p.indexer_dim + owned * kIndexBytes) : 0;
  ModeVolume v;
  v.primitive = "indexer query out, candidates (index+score) in, global top-k, indices out, selected KV in";
  v.bytes = std::max(home_bytes, owner_bytes);
  v.formula = fmt::format(
      "max(home: B * ((N-1)*c*8 + k_remote*c_kv), owner: B * (h_I*d_I + k_o*4))  [{}, k={}, c={}, k_remote={}, "
      "k_o<={}, h_I={}, d_I={}, c_kv={}]",
      common_params_text(p), sel.k, sel.candidates, remote, owned, p.indexer_heads, p.indexer_dim, ckv);
  v.note = "per decode step; exact: the merge of every rank's top candidates is the global top-k";
  v.exact = true;
  return v;
}

}  // namespace cpsim
