// TP communication overlapped with its GEMMs (parallel.tp_comm_overlap, Megatron-LM / Transformer Engine
// userbuffers style, with sequence parallelism): the all-gather before a column-parallel GEMM and the
// reduce-scatter after a row-parallel GEMM run as a ring of point-to-point chunk exchanges on a communication
// stream, while the compute stream runs the GEMM one token shard (T/tp rows) at a time.
//
//   all-gather + GEMM: at step k a rank multiplies the shard it holds from rank (r - k) mod tp while forwarding
//     that shard to rank r + 1 (k < tp - 1); chunk k + 1 waits for its shard's arrival.
//   GEMM + reduce-scatter: at step k a rank computes its partial product for shard (r - k - 1) mod tp; the
//     communication kernel adds the partial it received and forwards the sum to rank r + 1 (userbuffers reduces
//     on its own SMs), so the GEMM chunks run back to back and the exchange finishes beside whatever the compute
//     stream runs next; the rank's own shard is final once its last chunk and the last partial are in.
//
// Bytes per rank equal the plain ring all-gather / reduce-scatter ((tp - 1) shards received); time is the GEMM
// plus whatever part of the exchange its chunks cannot hide, and the TP flows coincide with other kernels' and
// other classes' traffic (so contention modes differ on them).
#pragma once
#include <vector>

#include "workloads/collectives.hpp"
#include "workloads/roofline.hpp"

namespace cpsim {

struct ChunkedGemm {
  const char* name;
  KernelCost chunk;  // the GEMM on one shard of T/tp tokens
  int layer = -1;
};

RankTasks allgather_overlapped(TaskGraph& g, const std::vector<int>& group, double shard_bytes,
                               const ChunkedGemm& gemm, const CollectiveTag& tag, const RankTasks& ready);
RankTasks reduce_scatter_overlapped(TaskGraph& g, const std::vector<int>& group, double shard_bytes,
                                    const ChunkedGemm& gemm, const CollectiveTag& tag, const RankTasks& ready);

}  // namespace cpsim
