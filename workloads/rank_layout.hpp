// Maps parallel ranks to GPUs by parallel.order (innermost first). The default [tp, cp, pp, dp] keeps a TP group
// on consecutive GPUs (one node's NVLink) and strides CP: gpu = cp_rank * tp + tp_rank; [cp, tp, ...] puts a CP
// group on consecutive GPUs instead: gpu = tp_rank * cp + cp_rank. DP and PP replicas lie outside (the simulation
// runs replica dp = 0, GPUs [0, cp*tp) per pipeline stage); a CP or TP group that spans nodes goes through the NICs.
// Pipeline stages (pp > 1) are simulated too: stage s of replica 0 starts at stage_base(s), and the GPUs the
// simulation runs are always [0, simulated_gpus()) (dp inside pp simulates every replica of a stage).
#pragma once
#include <vector>

#include "workloads/model.hpp"

namespace cpsim {

struct RankCoord {
  int cp = 0;
  int tp = 0;
};

class RankLayout {
 public:
  explicit RankLayout(const ParallelSpec& p) : p_(p) {}
  int gpu(int cp_rank, int tp_rank) const {
    return p_.cp_inner ? tp_rank * p_.cp + cp_rank : cp_rank * p_.tp + tp_rank;
  }
  RankCoord coord(int gpu) const {
    const int local = gpu % used_gpus();
    return p_.cp_inner ? RankCoord{local % p_.cp, local / p_.cp} : RankCoord{local / p_.tp, local % p_.tp};
  }
  // Replica of a GPU: (dp, pp) ranks, in the order they nest outside the CP x TP group.
  std::pair<int, int> replica(int gpu) const;
  int used_gpus() const { return p_.cp * p_.tp; }
  // GPUs the simulation runs: every pipeline stage of one CP x TP replica, or of simulated_dp of them.
  int simulated_gpus() const { return used_gpus() * p_.simulated_dp * p_.pp; }
  // The first GPU of pipeline stage `stage` in replica 0, and the GPU shift from one simulated replica to the next.
  int stage_base(int stage) const { return stage * used_gpus() * (dp_inside_pp() ? p_.simulated_dp : 1); }
  int replica_stride() const { return used_gpus() * (dp_inside_pp() ? 1 : p_.pp); }
  int stage(int gpu) const { return replica(gpu).second; }
  std::vector<int> cp_group(int tp_rank) const;  // GPUs of one CP ring, in CP-rank order
  std::vector<int> tp_group(int cp_rank) const;  // GPUs of one TP group, in TP-rank order
  // EP groups for MoE layers: each TP group (ep = tp) or all the replica's GPUs (ep = tp * cp), in EP-rank order.
  std::vector<std::vector<int>> ep_groups() const;
  int ep_rank(int gpu) const;  // its position in its EP group

 private:
  bool dp_inside_pp() const;
  ParallelSpec p_;
};

}  // namespace cpsim
