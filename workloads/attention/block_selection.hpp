// Which ranks own the blocks a MoBA query rank selects (or the entries a select-then-gather rank selects): k
// selections split over the N owners by a distribution, rounded to whole blocks by largest remainder (ties to the
// lower rank), so the simulated gather and its closed form count the same blocks.
#pragma once
#include <vector>

#include "workloads/model.hpp"

namespace cpsim {

// Per owner rank, how many of `k` selections made by `query_rank` it holds.
//   uniform: k/N each (the owner's own share stays local);
//   recency: owner j <= query_rank weighted 2^-(query_rank - j) (causal: later ranks hold nothing it may see);
//   skewed:  hot_fraction of k on hot_rank, the rest uniform.
std::vector<int> selections_per_owner(int k, int n, int query_rank, const MobaCpPlan& plan);

}  // namespace cpsim
