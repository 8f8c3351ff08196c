#include "platforms/xml_writer.hpp"

#include <fmt/format.h>

#include "platforms/topology.hpp"

namespace cpsim {

std::string platform_xml(const PlatformSpec& spec) {
  const Topology topo(spec);
  std::string out;
  out += "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  out += fmt::format("<!-- cpsim: {} nodes x {} GPUs ({}), NVLink {:.6g} B/s, NIC {:.6g} B/s per direction -->\n",
                     spec.nodes, spec.gpus_per_node, spec.gpu.key, spec.nvlink_bw_Bps, spec.nic_bw_Bps);
  out += "<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">\n";
  for (const auto& g : spec.gpus) out += fmt::format("    <host id=\"{}\" speed=\"{:.17g}f\"/>\n", g.host_name, spec.gpu.bf16_flops);
  for (const auto& l : topo.links())
    out += fmt::format("    <link id=\"{}\" bandwidth=\"{:.17g}Bps\" latency=\"{:.17g}s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                       l.name, l.bw_Bps, l.latency_s);
  const int n = spec.gpu_count();
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      out += fmt::format("    <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">", spec.gpus[s].host_name, spec.gpus[d].host_name);
      for (const auto& hop : topo.route(s, d))
        out += fmt::format("<link_ctn id=\"{}\" direction=\"{}\"/>", topo.links()[hop.link].name, hop.up ? "UP" : "DOWN");
      out += "</route>\n";
    }
  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace cpsim
