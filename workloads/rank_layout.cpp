#include "workloads/rank_layout.hpp"

#include <algorithm>

namespace cpsim {

std::vector<int> RankLayout::cp_group(int tp_rank) const {
  std::vector<int> g;
  for (int c = 0; c < p_.cp; ++c) g.push_back(gpu(c, tp_rank));
  return g;
}

std::pair<int, int> RankLayout::replica(int gpu) const {
  const int outer = gpu / used_gpus();
  // order lists pp before dp when pp is the inner of the two.
  const bool pp_inner = std::find(p_.order.begin(), p_.order.end(), "pp") <
                        std::find(p_.order.begin(), p_.order.end(), "dp");
  return pp_inner ? std::pair{outer / p_.pp, outer % p_.pp} : std::pair{outer % p_.dp, outer / p_.dp};
}

std::vector<int> RankLayout::tp_group(int cp_rank) const {
  std::vector<int> g;
  for (int t = 0; t < p_.tp; ++t) g.push_back(gpu(cp_rank, t));
  return g;
}

std::vector<std::vector<int>> RankLayout::ep_groups() const {
  std::vector<std::vector<int>> groups;
  if (p_.ep == p_.tp) {
    for (int c = 0; c < p_.cp; ++c) groups.push_back(tp_group(c));
  } else {
    groups.emplace_back();
    for (int c = 0; c < p_.cp; ++c)
      for (int t = 0; t < p_.tp; ++t) groups.back().push_back(gpu(c, t));
  }
  return groups;
}

}  // namespace cpsim
