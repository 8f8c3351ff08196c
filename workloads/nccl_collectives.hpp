// Collectives as NCCL runs them (docs/calibration.md, "Collectives"): on a calibrated platform, each all-reduce,
// all-gather and reduce-scatter picks an algorithm (ring, tree, nvls; hierarchical by request) and a protocol
// (LL, LL128, Simple) by NCCL's cost model, time = latency + bytes / algorithm bandwidth, and is lowered to flows
// that stream concurrently (NCCL pipelines its chunks): one flow per hop and channel carrying the hop's whole
// share, so SimGrid sees every byte on every link and contention emerges. A multi-node ring runs one channel per
// rail (local ranks rotated per channel, so each channel crosses nodes on its own NIC); channels that would share
// every link (inside one node) are one flow. Each flow pays the algorithm's calibrated latency before its bytes
// move (plus its protocol's bandwidth loss, see emit()); SimGrid adds the route's wire latency. Uncontended, a
// collective therefore takes latency + wire latency + (hop bytes / channels) / bottleneck rate.
//
// Per-rank bytes are those of the lock-step collectives (workloads/collectives.hpp), which the ideal machine runs.
#pragma once
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "platforms/platform_spec.hpp"
#include "platforms/topology.hpp"
#include "workloads/collectives.hpp"
#include "workloads/model.hpp"

namespace cpsim {

enum class CollectiveOp { ALLREDUCE, ALLGATHER, REDUCE_SCATTER };
const char* collective_op_name(CollectiveOp op);

struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::RING;
  Protocol protocol = Protocol::SIMPLE;
  int channels = 1;
  double latency_s = 0;      // the model's latency term
  double predicted_s = 0;    // latency + bytes / algorithm bandwidth (uncontended)
};

class CollectiveMachine {
 public:
  // `overrides`: per traffic class ("tp", "cp", ...), a fixed algorithm / protocol / channel count.
  CollectiveMachine(const PlatformSpec& platform, std::map<Traffic, CollectiveOverride> overrides = {});
  bool ideal() const { return platform_.ideal(); }
  // Fixed cost of one point-to-point message (the NCCL call), paid before its bytes move; SimGrid adds the wire.
  double p2p_overhead_s(int src_gpu, int dst_gpu) const;
  // The same for one message of an all-to-all call.
  double alltoall_overhead_s(int src_gpu, int dst_gpu) const;

  // `bytes`: all-reduce and reduce-scatter: the buffer per rank; all-gather: each rank's contribution.
  RankTasks run(CollectiveOp op, TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                const RankTasks& ready) const;
  CollectiveChoice choose(CollectiveOp op, const std::vector<int>& gpus, double bytes, Traffic traffic) const;
  // The model's time of one (algorithm, protocol) for the group, or nullopt when it does not apply.
  std::optional<double> model_time_s(CollectiveOp op, const std::vector<int>& gpus, double bytes,
                                     CollectiveAlgorithm a, Protocol p, int channels) const;

 private:
  struct GroupShape {
    std::vector<std::vector<int>> nodes;  // group positions, node by node in order of first appearance
    int min_per_node = 0;
    bool uniform = true;
  };
  struct PlannedFlow {
    int from = 0, to = 0;  // global GPU ids
    double bytes = 0;
  };
  struct Phase {
    std::vector<PlannedFlow> flows;
    double latency_s = 0;
    double bw_factor = 1;  // share of the bottleneck link the phase's flows may use
  };

  GroupShape shape_of(const std::vector<int>& gpus) const;
  int channels_for(const GroupShape& s, Traffic traffic) const;
  double latency_s(CollectiveAlgorithm a, Protocol p, int steps, int inter_steps) const;
  double bus_bw_Bps(const GroupShape& s) const;
  std::vector<Phase> ring_phase(CollectiveOp op, const std::vector<int>& gpus, double bytes, Protocol p,
                                int channels, int steps, int inter_steps) const;
  RankTasks emit(TaskGraph& g, const std::vector<int>& gpus, const std::vector<Phase>& phases,
                 const CollectiveTag& tag, const RankTasks& ready) const;

  const PlatformSpec& platform_;
  std::optional<Topology> topology_;  // generated platforms; XML platforms use their file's links as given
  std::map<Traffic, CollectiveOverride> overrides_;
  using ChoiceKey = std::tuple<int, int, double, std::vector<int>>;  // op, traffic, bytes, ranks per node
  mutable std::map<ChoiceKey, CollectiveChoice> choices_;
};

// The collectives every workload calls: NCCL-style on a calibrated machine (g.machine()), the lock-step rings of
// workloads/collectives.hpp on the ideal one.
RankTasks allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                    const RankTasks& ready);
RankTasks allgather(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_rank, const CollectiveTag& tag,
                    const RankTasks& ready);
RankTasks reduce_scatter(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready);
// All-to-all with per-pair sizes: NCCL posts every send and receive at once (one concurrent phase, each message
// paying the p2p overhead); the ideal machine runs the pairwise steps.
RankTasks alltoallv(TaskGraph& g, const std::vector<int>& gpus, const std::vector<std::vector<double>>& bytes,
                    const CollectiveTag& tag, const RankTasks& ready);
RankTasks alltoall(TaskGraph& g, const std::vector<int>& gpus, double bytes_per_pair, const CollectiveTag& tag,
                   const RankTasks& ready);

}  // namespace cpsim
