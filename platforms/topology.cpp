#include "platforms/topology.hpp"

#include <fmt/format.h>

namespace cpsim {

Topology::Topology(const PlatformSpec& spec) : spec_(spec) {
  // A port's line rate: the platform's, or its own (platform.link_bw).
  const auto line_rate_Bps = [&spec](const std::string& name, double fallback_Bps) {
    const auto it = spec.port_bw_Bps.find(name);
    return it == spec.port_bw_Bps.end() ? fallback_Bps : it->second;
  };
  for (const auto& g : spec.gpus) {
    // Achievable rates: the calibration's share of the line rate (protocol overhead; 1 on the ideal machine).
    const std::string nvl = fmt::format("n{}_nvl{}", g.node, g.local_gpu);
    const std::string nic = fmt::format("n{}_nic{}", g.node, g.local_gpu);
    links_.push_back({nvl, line_rate_Bps(nvl, spec.nvlink_bw_Bps) * spec.network.nvlink_bw_efficiency,
                      spec.nvlink_latency_s / 2});
    links_.push_back({nic, line_rate_Bps(nic, spec.nic_bw_Bps) * spec.network.nic_bw_efficiency,
                      spec.nic_latency_s / 2});
  }
}

std::vector<RouteHop> Topology::route(int src, int dst) const {
  const GpuSlot& a = spec_.gpus[src];
  const GpuSlot& b = spec_.gpus[dst];
  if (a.node == b.node) return {{nvl(src), true}, {nvl(dst), false}};
  if (a.local_gpu == b.local_gpu) return {{nic(src), true}, {nic(dst), false}};
  const int relay = a.node * spec_.gpus_per_node + b.local_gpu;  // same node as src, rail of dst
  return {{nvl(src), true}, {nvl(relay), false}, {nic(relay), true}, {nic(dst), false}};
}

double Topology::route_latency_s(int src, int dst) const {
  double t = 0;
  for (const auto& hop : route(src, dst)) t += links_[hop.link].latency_s;
  return t;
}

std::string directed_link_name(const PortLink& link, bool up) { return link.name + (up ? " up" : " down"); }

}  // namespace cpsim
