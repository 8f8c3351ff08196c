#include "workloads/hetero_volumes.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workloads/block_selection.hpp"

namespace cpsim {
namespace {

// Most selections a query rank must fetch from other ranks (k split over owners, own share local).
double max_remote_selections(int k, int n, const MobaCpPlan& plan) {
  int worst = 0;
  for (int q = 0; q < n; ++q) {
    const auto owners = selections_per_owner(k, n, q, plan);
    worst = std::max(worst, k - owners[q]);
  }
  return worst;
}

const char* selection_name(BlockSelection s) {
  return s == BlockSelection::UNIFORM ? "uniform" : s == BlockSelection::RECENCY ? "recency" : "skewed";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> volume_modes() {
  return {{"dense", "ring"},          {"dense", "allgather"}, {"dense", "ulysses"}, {"dense", "usp"}, {"dense", "tree"}, {"dense", "pass-q"}, {"dsa", "allgather"}, {"swa", "boundary"},
          {"swa", "allgather"},       {"hca", "local"},       {"hca", "allgather"}, {"csa", "allgather"},
          {"csa", "select-gather"},   {"dsa", "select-gather"}, {"moba", "gather"}, {"linear", "lasp1"},
          {"linear", "lasp2"}};
}

std::optional<ModeVolume> mode_volume(const CommParams& p, const std::string& kind, const std::string& algorithm,
                                      const MobaCpPlan& selection) {
  const double n = p.N, ckv = p.c_kv(), local = p.B * p.S / n;  // local = tokens per rank
  const std::string common = fmt::format("N={}, B={}, S={}, s={}", p.N, p.B, p.S, p.s);
  ModeVolume v;
  v.kind = kind;
  v.algorithm = algorithm;
  if (kind == "dense" && algorithm == "ring" && p.cached > 0) {
    v.primitive = "ring P2P, N-1 steps (pass-KV, cached + new KV)";
    v.bytes = (n - 1) * p.B * (p.S + p.cached) / n * ckv;
    v.formula = fmt::format("(N-1)/N * B*(S + cached) * c_kv  [{}, cached={}, c_kv={}]", common, p.cached, ckv);
  } else if (kind == "dense" && algorithm == "pass-q" && !p.decode) {
    v.primitive = "Q around the ring (pass-Q), partial outputs back to their owners";
    v.bytes = (n - 1) * local * (2 * p.q_heads * p.head_dim * p.s + 4 * p.q_heads);
    v.formula = fmt::format("(N-1)/N * B*S * (2*h_q*d*s + 4*h_q)  [{}, h_q={}, d={}]", common, p.q_heads, p.head_dim);
  } else if (kind == "dense" && (algorithm == "ring" || algorithm == "allgather")) {
    v.primitive = algorithm == "ring" ? "ring P2P, N-1 steps" : "AllGather";
    v.bytes = (n - 1) * local * ckv;
    v.formula = fmt::format("(N-1)/N * B*S * c_kv  [{}, c_kv={}]", common, ckv);
    v.seed_bytes = algorithm == "ring" ? p.B * p.S * ckv : v.bytes;
    v.seed_formula = algorithm == "ring" ? "S * c_kv" : "(N-1)/N * S * c_kv";
    if (algorithm == "ring") v.note = "the seed's summary table counts S*c_kv, the rank's own block included";
  } else if (kind == "dense" && (algorithm == "ulysses" || algorithm == "usp")) {
    // The all-to-alls move per-head Q, K, V (heads per GPU), whatever the KV cache's layout.
    const double d = p.head_dim, hq = p.q_heads, hkv = p.kv_heads;
    const double u = algorithm == "ulysses" ? n : p.ulysses_degree, rings = n / u;
    const double kv_r = std::max(1.0, hkv / u);
    const double a2a = (u - 1) * local * d * p.s * (2 * hq / u + 2 * kv_r);
    const double ring = (rings - 1) * (p.B * p.S / rings) * 2 * kv_r * d * p.s;
    v.primitive = algorithm == "ulysses" ? "all-to-all of Q, K, V and of O" : "all-to-all in Ulysses groups + ring across";
    v.bytes = a2a + ring;
    v.formula = fmt::format(
        "(u-1) * B*S/N * d * s * (2*h_q/u + 2*max(1, h_kv/u)) + (N/u-1) * B*S*u/N * 2*max(1, h_kv/u)*d*s  "
        "[{}, u={}, h_q={}, h_kv={}, d={}]",
        common, u, hq, hkv, d);
  } else if (kind == "dense" && algorithm == "ring-backward") {
    v.primitive = "ring P2P of K, V with dK, dV (N-1 steps) + dK, dV home";
    v.bytes = (2 * (n - 1) + 1) * local * ckv;
    v.formula = fmt::format("(2(N-1) + 1) * B*S/N * c_kv  [{}, c_kv={}]", common, ckv);
  } else if (kind == "dense" && algorithm == "allgather-backward") {
    v.primitive = "AllGather of K, V + reduce-scatter of dK, dV";
    v.bytes = 2 * (n - 1) * local * ckv;
    v.formula = fmt::format("2 * (N-1)/N * B*S * c_kv  [{}, c_kv={}]", common, ckv);
  } else if (kind == "dense" && algorithm == "ulysses-backward") {
    auto fwd = mode_volume(p, "dense", "ulysses");
    v.primitive = "all-to-all of dO, then of dQ, dK, dV";
    v.bytes = fwd->bytes;
    v.formula = fwd->formula;
  } else if (kind == "dense" && algorithm == "tree") {
    // Butterfly levels a rank receives in: log2 N, plus the fold-in step when N is not a power of two.
    int levels = 0, pow2 = 1;
    while (pow2 * 2 <= n) pow2 *= 2, ++levels;
    if (pow2 < n) ++levels;
    v.primitive = "tree all-reduce of (max, sum, numerator)";
    v.bytes = levels * p.B * p.q_heads * (4 + 4 + p.head_dim * p.s);
    v.formula = fmt::format("ceil-levels(N) * B * h_q * (4 + 4 + d*s)  [{}, levels={}, h_q={}, d={}]", common, levels,
                            p.q_heads, p.head_dim);
    v.note = "per decode step; max and sum in fp32";
  } else if (kind == "dense" && algorithm == "pass-q") {
    v.primitive = "Q around the ring (N-1 hops), partial outputs back to the owner";
    v.bytes = (n - 1) * p.B * p.q_heads * (p.head_dim * p.s + 4);
    v.formula = fmt::format("(N-1) * B * h_q * (d*s + 4)  [{}, h_q={}, d={}]", common, p.q_heads, p.head_dim);
    v.note = "per decode step, received by the token's owner (O and an fp32 log-sum-exp per head)";
  } else if (kind == "swa" && algorithm == "boundary") {
    v.primitive = "P2P from the left neighbour";
    v.bytes = p.B * std::min(p.n_win, p.S / n) * ckv;
    v.formula = fmt::format("B * min(n_win, S/N) * c_kv  [{}, n_win={}, c_kv={}]", common, p.n_win, ckv);
    v.seed_bytes = p.B * std::min(p.n_win, p.S / n) * ckv;
    v.seed_formula = "min(n_win, S/N) * 2*d_kv*s";
    v.note = "rank 0 receives nothing; contiguous partition";
  } else if (kind == "swa" && algorithm == "allgather") {
    v.primitive = "AllGather";
    v.bytes = (n - 1) * local * ckv;
    v.formula = fmt::format("(N-1)/N * B*S * c_kv  [{}, c_kv={}]", common, ckv);
    v.note = "round-robin partition: every rank's windows cover the whole sequence, so SWA needs all remote KV";
  } else if (kind == "hca" && algorithm == "local") {
    v.primitive = "none (local dense over local compressed entries)";
    v.formula = "0";
    v.seed_bytes = 0;
    v.seed_formula = "0";
  } else if ((kind == "hca" || kind == "csa") && algorithm == "allgather") {
    const double ratio = kind == "hca" ? p.hca_ratio : p.csa_ratio;
    v.primitive = "AllGather of compressed KV";
    v.bytes = (n - 1) * local / ratio * ckv;
    v.formula = fmt::format("(N-1)/N * B*S/m * c_kv  [{}, m={}, c_kv={}]", common, ratio, ckv);
    v.seed_bytes = v.bytes;
    v.seed_formula = "(N-1)/N * S/m * 2*d_c*s";
  } else if (kind == "dsa" && algorithm == "allgather") {
    v.primitive = "AllGather of KV latent + AllGather of hidden states";
    v.bytes = (n - 1) * local * (ckv + p.d_model * p.s);
    v.formula = fmt::format("(N-1)/N * B*S * (c_kv + d_model*s)  [{}, c_kv={}, d_model={}]", common, ckv, p.d_model);
    v.seed_bytes = v.bytes;
    v.seed_formula = "(N-1)/N * S * (2*d_c + d_model) * s";
    v.note = fmt::format("KV {:.0f} B + hidden states {:.0f} B; every rank keeps the full KV (N x memory); the "
                         "seed's share (75%) counts the KV part only",
                         (n - 1) * local * ckv, (n - 1) * local * p.d_model * p.s);
  } else if ((kind == "csa" || kind == "dsa") && algorithm == "select-gather") {
    const double k = kind == "csa" ? p.csa_top_k : p.dsa_top_k;
    const double remote = max_remote_selections(static_cast<int>(k), static_cast<int>(n), selection);
    v.primitive = "top-k merge (index+score) + sparse gather";
    v.bytes = p.B * ((n - 1) * k * kTopkEntryBytes + remote * ckv);
    v.formula = fmt::format("B * ((N-1)*k*8 + k_remote*c_kv)  [{}, k={}, k_remote={} ({}), c_kv={}]", common, k,
                            remote, selection_name(selection.selection), ckv);
    v.seed_bytes = p.B * k * ckv;
    v.seed_formula = "k * c_kv";
    v.note = "the seed counts k*c_kv (all k selections, local ones included) and leaves out the top-k merge";
  } else if (kind == "moba" && algorithm == "gather") {
    const double k = p.moba_top_k_blocks;
    const double remote = max_remote_selections(static_cast<int>(k), static_cast<int>(n), selection);
    v.primitive = "centroid AllGather + block gather";
    v.bytes = (n - 1) * local / p.moba_block * p.gate_width * p.s + p.B * remote * p.moba_block * ckv;
    v.formula = fmt::format(
        "(N-1)/N * B*S/B_blk * d_gate*s + B * k_remote*B_blk*c_kv  [{}, B_blk={}, d_gate={}, k_block={}, "
        "k_remote={} ({}), c_kv={}]",
        common, p.moba_block, p.gate_width, k, remote, selection_name(selection.selection), ckv);
    v.seed_bytes = k * p.moba_block * ckv + (n - 1) * local / p.moba_block * p.gate_width * p.s;
    v.seed_formula = "k_block * B_blk * c_kv + (N-1)/N * S/B_blk * d_kv*s";
    v.note = "the seed counts k_block*B_blk*c_kv (all selected blocks, local ones included)";
  } else if (kind == "linear" && (algorithm == "lasp2" || algorithm == "lasp1")) {
    const double state = p.B * p.linear_heads * p.linear_head_dim * p.linear_head_dim * p.s;
    v.primitive = algorithm == "lasp2" ? "AllGather of [B,H,d,d] states" : "P2P state chain, N-1 serial steps";
    v.bytes = algorithm == "lasp2" ? (n - 1) * state : (n > 1 ? state : 0);
    v.formula = algorithm == "lasp2"
                    ? fmt::format("(N-1) * B*H*d^2*s  [{}, H={}, d={}]", common, p.linear_heads, p.linear_head_dim)
                    : fmt::format("B*H*d^2*s (from the left neighbour)  [{}, H={}, d={}]", common, p.linear_heads,
                                  p.linear_head_dim);
    if (algorithm == "lasp2") {
      v.seed_bytes = (n - 1) / n * state;
      v.seed_formula = "(N-1)/N * B*H*d^2*s";
      v.note = "independent of S. The seed's (N-1)/N*B*H*d^2*s treats the gathered states as one [B,H,d,d] tensor "
               "split N ways; an AllGather of every rank's full state moves N times that";
    } else {
      v.note = "rank 0 receives nothing; the chain is serial";
    }
  } else {
    return std::nullopt;
  }
  return v;
}

}  // namespace cpsim
