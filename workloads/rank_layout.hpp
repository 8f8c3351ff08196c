// Maps parallel ranks to GPUs. TP is innermost (consecutive GPUs, so a TP group stays inside a node's NVLink
// domain), CP outside it: gpu = cp_rank * tp + tp_rank.
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
  int gpu(int cp_rank, int tp_rank) const { return cp_rank * p_.tp + tp_rank; }
  RankCoord coord(int gpu) const { return {gpu / p_.tp, gpu % p_.tp}; }
  int used_gpus() const { return p_.cp * p_.tp; }
  std::vector<int> cp_group(int tp_rank) const;  // GPUs of one CP ring, in CP-rank order
  std::vector<int> tp_group(int cp_rank) const;  // GPUs of one TP group, in TP-rank order

 private:
  ParallelSpec p_;
};

}  // namespace cpsim
