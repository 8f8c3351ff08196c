// Maps parallel ranks to GPUs by parallel.order (innermost first). The default [tp, cp, pp, dp] keeps a TP group
// on consecutive GPUs (one node's NVLink) and strides CP: gpu = cp_rank * tp + tp_rank; [cp, tp, ...] puts a CP
// group on consecutive GPUs instead: gpu = tp_rank * cp + cp_rank. DP and PP replicas lie outside (the simulation
// runs replica dp = pp = 0, GPUs [0, cp*tp)); a CP or TP group that spans nodes goes through the NICs.
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
  // GPUs the simulation runs: one CP x TP replica, or simulated_dp of them on consecutive blocks.
  int simulated_gpus() const { return used_gpus() * p_.simulated_dp; }
  std::vector<int> cp_group(int tp_rank) const;  // GPUs of one CP ring, in CP-rank order
  std::vector<int> tp_group(int cp_rank) const;  // GPUs of one TP group, in TP-rank order
  // EP groups for MoE layers: each TP group (ep = tp) or all the replica's GPUs (ep = tp * cp), in EP-rank order.
  std::vector<std::vector<int>> ep_groups() const;
  int ep_rank(int gpu) const;  // its position in its EP group

 private:
  ParallelSpec p_;
};

}  // namespace cpsim
