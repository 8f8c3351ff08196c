// The closed forms of heterogeneous-attention-cp.md: bytes one CP rank receives per layer for each attention kind
// and CP algorithm, with the primitive and the formula as text. Each kind registers its own (its folder under
// workloads/attention/); `cpsim volumes` prints them as a table and the summary puts the simulated bytes of the
// same (kind, algorithm) beside them. All values are what a rank receives from other ranks (its own share never
// moves); where the seed's table counts differently it says so in `note`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "workloads/model.hpp"

namespace cpsim {

struct CommParams {
  double S = 0, N = 1, B = 1, s = 2;  // sequence length, CP ranks, batch, bytes per element
  double kv_width = 0;      // elements per token of K (= of V): d_kv (GQA, per TP rank) or d_c (MLA latent)
  double gate_width = 0;    // MoBA centroid width (the seed's d_kv in the gating formula)
  double d_model = 0;
  double linear_heads = 0, linear_head_dim = 0;  // H and d of the [B, H, d, d] state
  double ssm_state_dim = 128;                    // N of a Mamba-2 layer's [B, H, N, d] state
  double n_win = 0;
  double csa_ratio = 4, hca_ratio = 128, csa_top_k = 512, dsa_top_k = 2048;
  double moba_block = 512, moba_top_k_blocks = 8;
  double q_heads = 0, kv_heads = 0, head_dim = 128, ulysses_degree = 1;  // heads per GPU (Ulysses, USP, decode)
  double cached = 0;    // prefill with a persistent KV cache: cached tokens per sequence
  bool decode = false;  // decode steps: S is the cached context, new_tokens steps follow
  double new_tokens = 1;
  double indexer_heads = 64, indexer_dim = 128;  // the lightning indexer's query (FP8): exact selection sends it
  bool csa_exact = false, dsa_exact = false;      // select-then-gather's exact variant (cp.<kind>.exact)
  double c_kv() const { return 2 * kv_width * s; }  // the seed's c_kv: bytes of K + V per token
};

struct ModeVolume {
  AttentionKind kind{};
  CpAlgorithm algorithm{};
  bool backward = false;  // training's backward pass
  std::string primitive;
  double bytes = 0;     // received per rank per layer: what cpsim's lowering moves
  std::string formula;  // symbolic, then the values used
  std::optional<double> seed_bytes;  // the seed's own formula for the mode, evaluated (nullopt: the seed has none)
  std::string seed_formula;
  std::string note;     // why cpsim and the seed differ, when they do
  std::optional<bool> exact;  // modes that select (select-then-gather): whether the selection is the exact top-k
};

// "N=.., B=.., S=.., s=.." for the formula text.
std::string common_params_text(const CommParams& p);
// Most selections a query rank must fetch from other ranks (k split over owners, own share local).
double max_remote_selections(int k, int n, const MobaCpPlan& plan);
// Training's backward: the most a rank receives of selections gathered again plus gradients returned to it as an
// owner, max over r of (k - own_r) + sum over q != r of owners_q[r].
double max_remote_selections_and_returns(int k, int n, const MobaCpPlan& plan);
const char* selection_name(BlockSelection s);  // uniform | recency | skewed
// AllGather of every rank's full KV block: (N-1)/N * B*S * c_kv received per rank (dense AllGather-KV, SWA's
// round-robin fallback).
ModeVolume kv_allgather_volume(const CommParams& p);
// Shared by the compressed and sparse kinds (CSA, HCA, DSA): an AllGather of KV compressed `ratio` times, and
// select-then-gather of k entries.
ModeVolume compressed_allgather_volume(const CommParams& p, double ratio);
// Exact: every rank's indexer queries go to every rank first (AllGather, FP8), each returns its top k for each
// querying rank; approximate: each rank scores its local keys with its own queries only.
ModeVolume select_gather_volume(const CommParams& p, double k, bool exact);
// Its training backward: the forward's traffic again, and each rank's gathered entries' dK, dV back to their owners.
ModeVolume select_gather_backward_volume(const CommParams& p, double k, bool exact);

// Decode (the decode_volume of each mode): a step's token attends the cached context plus the tokens generated so
// far, itself included; the largest step is the last one, S + new_tokens.
double decode_context_max(const CommParams& p);
// A mode whose decode step moves nothing between GPUs (the step runs where its state lives).
std::optional<ModeVolume> no_decode_traffic(const CommParams& p, const MobaCpPlan& selection);
// What a decode token selects from `entries` entries spread evenly over n ranks, the token on CP rank `home`: k_eff
// = min(k, entries) selections, each rank's candidates (its best min(k_eff, entries/N) by score), and per rank how
// many of the k_eff it owns (uniform, block_selection.hpp).
struct DecodeSelection {
  int k = 0;
  int candidates = 0;
  std::vector<int> owners;
};
DecodeSelection decode_selection(double k, double entries, int n, int home);
// Exact select-then-gather for one decode token: the home sends the indexer query to every rank, each returns its
// top candidates (index + score), the home merges them (the global top-k), asks each owner for its selected
// entries (int32 indices) and receives their KV.
ModeVolume select_gather_decode_volume(const CommParams& p, double k, double ratio);
constexpr double kIndexBytes = 4;  // an int32 entry index

// A training backward whose bytes are the forward's `times` over (replayed AllGather + gradient reduce-scatter:
// 2; the same collective once more: 1), described as `primitive`.
ModeVolume backward_of(ModeVolume forward, double times, const std::string& primitive);

// Bytes of one selection message entry in the distributed top-k merge: an int32 index and an fp32 score.
constexpr double kTopkEntryBytes = 8;

}  // namespace cpsim
