#include "platforms/simgrid_platform.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "platforms/topology.hpp"
#include "sim/output_folder.hpp"

namespace sg4 = simgrid::s4u;

namespace cpsim {

void configure_pure_network_model() {
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

std::vector<sg4::Host*> build_simgrid_platform(sg4::Engine& engine, const PlatformSpec& spec) {
  if (!spec.xml_file.empty()) {
    std::vector<sg4::Host*> hosts;
    engine.load_platform(spec.xml_file);
    for (const auto& g : spec.gpus) hosts.push_back(engine.host_by_name(g.host_name));
    return hosts;
  }
  return build_network_copies(engine, spec, {""}).front();
}

std::vector<std::vector<sg4::Host*>> build_network_copies(sg4::Engine&, const PlatformSpec& spec,
                                                          const std::vector<std::string>& prefixes) {
  const Topology topo(spec);
  auto* zone = sg4::create_full_zone("world");
  std::vector<std::vector<sg4::Host*>> copies;
  for (const auto& prefix : prefixes) {
    std::vector<sg4::Host*> hosts;
    for (const auto& g : spec.gpus)
      hosts.push_back(zone->create_host(prefix + g.host_name, spec.gpu.bf16_flops)->seal());
    std::vector<sg4::Link*> links;
    for (const auto& l : topo.links())
      links.push_back(zone->create_split_duplex_link(prefix + l.name, l.bw_Bps)->set_latency(l.latency_s)->seal());
    using Dir = sg4::LinkInRoute::Direction;
    const int n = spec.gpu_count();
    std::vector<sg4::LinkInRoute> route;
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        route.clear();
        for (const auto& hop : topo.route(s, d)) route.emplace_back(links[hop.link], hop.up ? Dir::UP : Dir::DOWN);
        zone->add_route(hosts[s]->get_netpoint(), hosts[d]->get_netpoint(), nullptr, nullptr, route, false);
      }
    copies.push_back(std::move(hosts));
  }
  zone->seal();
  return copies;
}

}  // namespace cpsim

namespace cpsim {

std::unique_ptr<simgrid::s4u::Engine> start_engine() {
  xbt_log_control_set("root.thres:critical");
  int argc = 1;
  static char name[] = "cpsim";
  char* argv[] = {name, nullptr};
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  configure_pure_network_model();
  install_signal_cleanup();  // SimGrid's engine installs its own SIGINT handler; Ctrl-C must clean our outputs
  return engine;
}

}  // namespace cpsim
