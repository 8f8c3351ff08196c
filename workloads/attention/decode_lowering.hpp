// How one layer's attention runs in a decode step under CP: a decode lowering per (attention kind, CP algorithm),
// registered with its kind (registry.hpp) and called by the decode builder (workloads/decode.cpp) between the QKV
// projection and the output projection, once per CP group.
//
// Where the new token's hidden state lives (its home) is part of each mode:
//   every rank  (dense tree): each CP rank holds the token and runs the projections and the FFN (replicated);
//   step owner  (dense pass-q): the CP rank step mod N, as Meta appends the KV round-robin;
//   tail rank   (every other kind): CP rank N-1, the rank holding the end of the sequence, where the new tokens'
//               KV is appended: the SWA window, the linear state, the decode's compressed entries live there.
// When consecutive layers have different homes the builder moves the hidden state (B x d_model) between them.
#pragma once
#include <optional>
#include <vector>

#include "workloads/attention/lowering.hpp"
#include "workloads/roofline.hpp"

namespace cpsim {

enum class DecodeHome { EVERY_RANK, STEP_OWNER, TAIL_RANK };

struct DecodeContext {
  LayerContext layer;     // graph, inputs, shard shape, layout, layer index
  int home = 0;           // CP rank holding the token (every rank for EVERY_RANK modes)
  double context = 0;     // tokens per sequence already cached when this step's token attends (C + step)
};

struct DecodeAttention {
  RankTasks pending;                 // per CP rank of the group: what the output projection waits for
  std::optional<KernelCost> merge;   // run on the home rank(s) just before the output projection
  int merge_step = 0;                // the merge task's algorithm step (trace)
};

// `gpus`: one CP group in CP-rank order; `entry[r]`: tasks after which rank r may start (on the home rank(s):
// its QKV projection is done).
using DecodeLowering = DecodeAttention (*)(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);

// The home's CP rank for a step (-1: every rank).
int decode_home_rank(DecodeHome home, int step, int cp);

// A kernel of a decode step, by name.
struct NamedKernel {
  const char* name;
  KernelCost cost;
};
// A decode step that runs on the home rank alone (its state is all there): `kernels` in order; other ranks pass.
DecodeAttention decode_on_home(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry,
                               const std::vector<NamedKernel>& kernels);
// The token's attention over `keys` cached keys (or compressed entries, or selections) per sequence.
KernelCost decode_attention_cost(const DecodeContext& ctx, double keys);

// Dense (dense/decode_attention.cpp).
DecodeAttention decode_dense_tree(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_dense_pass_q(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
// SWA (swa/swa_decode.cpp).
DecodeAttention decode_swa_boundary(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_swa_allgather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
// Compressed and sparse kinds (sparse_decode.cpp); "full": every rank holds every entry after the prefill's
// AllGather (the full write-back), so the token's home reads them all locally.
DecodeAttention decode_hca(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_csa_full(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_csa_select_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_dsa_full(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_dsa_select_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
// MoBA (moba/moba_decode.cpp) and linear attention (linear/linear_decode.cpp).
DecodeAttention decode_moba_gather(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_linear(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);
DecodeAttention decode_ssm(DecodeContext& ctx, const std::vector<int>& gpus, const RankTasks& entry);

}  // namespace cpsim
