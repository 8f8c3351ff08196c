#include "workloads/rank_symmetry.hpp"

#include <fmt/format.h>

#include "platforms/topology.hpp"

namespace cpsim {

RankSymmetry::RankSymmetry(int orbit_size, int gpu_count) : orbit_(orbit_size), shift_(gpu_count) {
  for (int gpu = 0; gpu < gpu_count; ++gpu) shift_[gpu] = gpu % orbit_size;
}

std::optional<RankSymmetry> tp_rotation_symmetry(const ParallelSpec& p, const PlatformSpec& platform,
                                                 std::string* why_not) {
  const auto refuse = [why_not](std::string reason) -> std::optional<RankSymmetry> {
    if (why_not) *why_not = std::move(reason);
    return std::nullopt;
  };
  if (p.tp < 2) return refuse("tp = 1: no TP rotation");
  if (p.cp_inner) return refuse("parallel.order puts CP ranks on consecutive GPUs");
  if (p.simulated_dp > 1) return refuse("several DP replicas are simulated");
  if (!platform.xml_file.empty()) return refuse("an XML platform's links are not known to be symmetric");
  if (platform.gpus_per_node % p.tp != 0)
    return refuse(fmt::format("tp = {} does not divide the {} GPUs of a node", p.tp, platform.gpus_per_node));
  // Every port must equal its representative's: one slower NIC or NVLink port breaks the symmetry.
  const Topology topo(platform);
  const RankSymmetry sym(p.tp, platform.gpu_count());
  for (std::size_t l = 0; l < topo.links().size(); ++l) {
    const PortLink& a = topo.links()[l];
    const PortLink& b = topo.links()[sym.representative_link(static_cast<int>(l))];
    if (a.bw_Bps != b.bw_Bps || a.latency_s != b.latency_s)
      return refuse(fmt::format("link {} differs from {}", a.name, b.name));
  }
  return sym;
}

}  // namespace cpsim
