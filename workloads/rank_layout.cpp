#include "workloads/rank_layout.hpp"

namespace cpsim {

std::vector<int> RankLayout::cp_group(int tp_rank) const {
  std::vector<int> g;
  for (int c = 0; c < p_.cp; ++c) g.push_back(gpu(c, tp_rank));
  return g;
}

std::vector<int> RankLayout::tp_group(int cp_rank) const {
  std::vector<int> g;
  for (int t = 0; t < p_.tp; ++t) g.push_back(gpu(cp_rank, t));
  return g;
}

}  // namespace cpsim
