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
    const std::string nvl = PortName{PortKind::NVLINK, g.node, g.local_gpu}.str();
    const std::string nic = PortName{PortKind::NIC, g.node, g.local_gpu}.str();
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

std::string PortName::str() const {
  return fmt::format("n{}_{}{}", node, kind == PortKind::NIC ? "nic" : "nvl", local_gpu);
}

std::optional<PortName> PortName::parse(std::string_view name) {
  std::size_t i = 0;
  const auto number = [&](int& out) {  // at most 9 digits: no overflow
    const std::size_t from = i;
    for (out = 0; i < name.size() && i - from < 9 && name[i] >= '0' && name[i] <= '9'; ++i) out = out * 10 + (name[i] - '0');
    return i > from;
  };
  PortName p;
  if (name.substr(0, 1) != "n") return std::nullopt;
  ++i;
  if (!number(p.node) || name.substr(i, 1) != "_") return std::nullopt;
  const std::string_view kind = name.substr(++i, 3);
  if (kind != "nvl" && kind != "nic") return std::nullopt;
  p.kind = kind == "nic" ? PortKind::NIC : PortKind::NVLINK;
  i += 3;
  if (!number(p.local_gpu) || i != name.size()) return std::nullopt;
  return p;
}

}  // namespace cpsim
