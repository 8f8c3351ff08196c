#include "workloads/expert_routing.hpp"

#include <algorithm>

namespace cpsim {

ExpertRouting expert_routing(const ParallelSpec& p) {
  const int ep = p.ep;
  ExpertRouting r;
  r.share.assign(ep, 1.0 / ep);
  if (ep == 1 || p.ep_hot_share == 0) return r;
  const double cap = p.ep_capacity_factor > 0 ? p.ep_capacity_factor / ep : 1.0;
  r.share[0] = std::min(p.ep_hot_share, cap);
  r.dropped_share = p.ep_hot_share - r.share[0];
  for (int i = 1; i < ep; ++i) r.share[i] = (1 - p.ep_hot_share) / (ep - 1);
  return r;
}

}  // namespace cpsim
