// The network of a preset cluster, as plain data: one split-duplex NVLink port and one split-duplex NIC per GPU,
// and the route between any two GPUs. Both the SimGrid builder and the XML writer read it, so the simulated
// platform and the emitted XML are the same thing.
//
//   node n:  gpu g --[n{n}_nvl{g}]--> NVSwitch (non-blocking, no link) --[n{n}_nvl{h}]--> gpu h
//            gpu g --[n{n}_nic{g}]--> rail-g switch (non-blocking, no link) --[n{m}_nic{g}]--> node m, gpu g
//
// Routes: same node [nvl(src) UP, nvl(dst) DOWN]; other node, same rail [nic(src) UP, nic(dst) DOWN];
// other node, other rail (PXN) [nvl(src) UP, nvl(relay) DOWN, nic(relay) UP, nic(dst) DOWN], where the relay is
// the GPU of the source node on the destination's rail. Each port link carries half of the one-way latency, so a
// route costs exactly nvlink_latency, nic_latency, or their sum.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platforms/platform_spec.hpp"

namespace cpsim {

struct PortLink {
  std::string name;   // n0_nvl3, n1_nic0
  double bw_Bps = 0;  // per direction
  double latency_s = 0;
};

struct RouteHop {
  int link = 0;      // index into Topology::links()
  bool up = true;    // UP = away from the GPU, DOWN = towards it
};

class Topology {
 public:
  explicit Topology(const PlatformSpec& spec);
  const std::vector<PortLink>& links() const { return links_; }
  std::vector<RouteHop> route(int src_gpu, int dst_gpu) const;
  double route_latency_s(int src_gpu, int dst_gpu) const;

 private:
  int nvl(int gpu) const { return 2 * gpu; }
  int nic(int gpu) const { return 2 * gpu + 1; }
  const PlatformSpec& spec_;
  std::vector<PortLink> links_;
};

// The directed name of a link as reports and traces show it: "n0_nvl3 up".
std::string directed_link_name(const PortLink& link, bool up);

// A GPU's port by name: "n<node>_nvl<local>" (its NVLink port) or "n<node>_nic<local>" (its NIC). The one place
// that knows the format; SimGrid names a port's two directions <name>_UP and <name>_DOWN (split-duplex).
enum class PortKind { NVLINK, NIC };
struct PortName {
  PortKind kind = PortKind::NVLINK;
  int node = 0, local_gpu = 0;
  std::string str() const;
  static std::optional<PortName> parse(std::string_view name);  // the whole of `name`, else nullopt
};

}  // namespace cpsim
