// The decode workload (cp-overview.md, decode CP; heterogeneous-attention-cp.md per kind): `new_tokens` decode
// steps, each running every layer for the B new tokens against a KV cache (or state) of context_len tokens sharded
// over the CP ranks. Each layer's attention is its kind's decode lowering (workloads/attention/decode_lowering.hpp):
//   dense tree:   every CP rank holds the token; partial attention over its shard, then tree all-reduces of the
//                 softmax partials (max, sum, numerator) in ceil(log2 N) levels; projections and FFN replicated.
//   dense pass-q: the token lives on CP rank step mod N; its Q travels the ring for N-1 hops and the partials
//                 return to it in one all-to-all.
//   other kinds:  the token lives on the tail rank (where new KV and the linear state are appended): SWA's window,
//                 the compressed and sparse kinds' selections, MoBA's blocks, linear attention's state.
// The projections, the merge and the FFN run where the token lives; when consecutive layers live on different GPUs
// the hidden state (B x d_model) moves between them (CP traffic, counted in the receiving layer).
// Time per output token = makespan / new_tokens.
#pragma once
#include "workloads/workload.hpp"

namespace cpsim {

TaskGraph generate_decode(const WorkloadInputs& in, int gpu_count);

// The CP rank holding the token's hidden state in model layer `layer` at decode step `step` (-1: every rank).
int decode_layer_home(const WorkloadInputs& in, int layer, int step);
// Whether some decode step moves the hidden state into a layer of `kinds` from the previous layer's GPU.
bool decode_hidden_moves_into(const WorkloadInputs& in, const LayerKinds& kinds);

}  // namespace cpsim
