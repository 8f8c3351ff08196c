#include "workloads/rank_layout.hpp"

#include <algorithm>

namespace cpsim {

std::vector<int> RankLayout::cp_group(int tp_rank) const {
  std::vector<int> g;
  for (int c = 0; c < p_.cp; ++c) g.push_back(gpu(c, tp_rank));
  return g;
}

bool RankLayout::dp_inside_pp() const {  // order lists dp before pp when dp is the inner of the two
  return std::find(p_.order.begin(), p_.order.end(), "dp") < std::find(p_.order.begin(), p_.order.end(), "pp");
}

std::pair<int, int> RankLayout::replica(int gpu) const {
  const int outer = gpu / used_gpus();
  return dp_inside_pp() ? std::pair{outer % p_.dp, outer / p_.dp} : std::pair{outer / p_.pp, outer % p_.pp};
}

std::vector<int> RankLayout::tp_group(int cp_rank) const {
  std::vector<int> g;
  for (int t = 0; t < p_.tp; ++t) g.push_back(gpu(cp_rank, t));
  return g;
}

// ep = tp: each TP group, in TP-rank order; ep = tp * cp: one group in (cp rank, tp rank) order.
std::vector<std::vector<int>> RankLayout::ep_groups() const {
  std::vector<std::vector<int>> groups(p_.ep == p_.tp ? p_.cp : 1);
  for (int c = 0; c < p_.cp; ++c)
    for (int t = 0; t < p_.tp; ++t) groups[p_.ep == p_.tp ? c : 0].push_back(gpu(c, t));
  return groups;
}

int RankLayout::ep_rank(int gpu) const {
  const RankCoord c = coord(gpu);
  return p_.ep == p_.tp ? c.tp : c.cp * p_.tp + c.tp;
}

}  // namespace cpsim
