// Where a MoE layer's routed tokens go across the EP group, and how much expert work each EP rank gets.
// Uniform routing sends every EP rank the same share (1/ep) of each GPU's routed token copies. Skewed routing
// (parallel.ep_hot_share = h) sends h of them to EP rank 0's experts (a hot expert set) and spreads the rest
// evenly over the other ranks; a capacity factor c caps any rank's share at c/ep (tokens over capacity are dropped,
// as GShard/Switch capacity does), so the hot rank receives min(h, c/ep).
#pragma once
#include <vector>

#include "workloads/model.hpp"

namespace cpsim {

struct ExpertRouting {
  std::vector<double> share;  // per EP rank: fraction of each GPU's routed copies it receives
  double dropped_share = 0;   // fraction of the routed copies dropped by the capacity cap
  // Expert work of an EP rank relative to uniform routing: ep * share.
  double load_factor(int ep_rank) const { return double(share.size()) * share[ep_rank]; }
};

ExpertRouting expert_routing(const ParallelSpec& p);

}  // namespace cpsim
