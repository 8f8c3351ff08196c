// The symmetry a run may be simulated under: rotating the TP ranks of every TP group by the same amount. On a preset
// cluster (one NVLink port and one NIC per GPU, rails by local GPU index) with TP groups inside nodes, the rotation
// maps every GPU, port and route onto another; when the task graph is invariant under it too (checked while it is
// built: workloads/task_graph.cpp), each GPU does exactly what its group's TP rank 0 does, shifted, and max-min
// sharing gives rotated flows equal rates. The simulation then runs TP rank 0 of every group (the representatives)
// with each route's links folded onto their representatives' (so a link carries the rotated copies of the flows it
// would carry), and reports the other ranks as copies: the same makespan and per-GPU figures as the full run.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "platforms/platform_spec.hpp"
#include "workloads/model.hpp"

namespace cpsim {

class RankSymmetry {
 public:
  RankSymmetry(int orbit_size, int gpu_count);
  int orbit_size() const { return orbit_; }  // GPUs per orbit: the TP degree
  int gpu_count() const { return static_cast<int>(shift_.size()); }
  int shift(int gpu) const { return shift_[gpu]; }  // its TP rank (layout gpu = cp_rank * tp + tp_rank)
  int representative(int gpu) const { return gpu - shift(gpu); }
  bool is_representative(int gpu) const { return shift(gpu) == 0; }
  // The GPU `gpu` becomes when every TP rank moves `by` places on (|by| < orbit_size()). No division: the graph
  // builder calls it for every task and dependency.
  int rotate(int gpu, int by) const {
    int s = shift(gpu) + by;
    s += s < 0 ? orbit_ : s >= orbit_ ? -orbit_ : 0;
    return representative(gpu) + s;
  }
  // A preset topology link (platforms/topology.hpp: 2 * gpu for its NVLink port, 2 * gpu + 1 for its NIC) folded
  // onto its orbit's representative.
  int representative_link(int link) const { return 2 * representative(link / 2) + link % 2; }

 private:
  int orbit_;
  std::vector<int> shift_;  // per GPU
};

// The rotation, when the parallel plan and the platform admit it: TP > 1 and groups of consecutive GPUs inside a
// node (the default rank order), one simulated replica, and every GPU's ports equal to its representative's. Else
// nullopt, with the reason in `why_not`.
std::optional<RankSymmetry> tp_rotation_symmetry(const ParallelSpec& parallel, const PlatformSpec& platform,
                                                 std::string* why_not = nullptr);

}  // namespace cpsim
