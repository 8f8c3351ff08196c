#include "workloads/attention/block_selection.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cpsim {

std::vector<int> selections_per_owner(int k, int n, int query_rank, const MobaCpPlan& plan) {
  std::vector<double> w(n, 0.0);
  switch (plan.selection) {
    case BlockSelection::UNIFORM: std::fill(w.begin(), w.end(), 1.0); break;
    case BlockSelection::RECENCY:
      for (int j = 0; j <= query_rank; ++j) w[j] = std::ldexp(1.0, -(query_rank - j));
      break;
    case BlockSelection::SKEWED:
      for (int j = 0; j < n; ++j) w[j] = (1 - plan.hot_fraction) / n + (j == plan.hot_rank ? plan.hot_fraction : 0);
      break;
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<int> out(n);
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (int j = 0; j < n; ++j) {
    const double share = k * w[j] / total;
    out[j] = static_cast<int>(std::floor(share));
    given += out[j];
    remainders.push_back({share - out[j], j});
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](auto a, auto b) { return a.first > b.first; });
  for (int i = 0; given < k; ++i, ++given) ++out[remainders[i].second];
  return out;
}

}  // namespace cpsim
