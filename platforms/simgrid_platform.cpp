#include "platforms/simgrid_platform.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <xbt/log.h>

#include "platforms/topology.hpp"
#include "platforms/xml_platform.hpp"
#include "workloads/rank_symmetry.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/task_graph.hpp"
#include "sim/report/output_folder.hpp"

namespace sg4 = simgrid::s4u;

namespace cpsim {

void configure_pure_network_model() {
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

namespace {

// SimGrid's "Parse error at PATH:LINE: message" as cpsim's located one-line error, naming the file as cpsim does.
InputError located_parse_error(const std::string& file, const std::string& what) {
  const std::string prefix = "Parse error at ";
  if (what.rfind(prefix, 0) == 0) {  // the path may hold ':'; the line number is the last field before ": "
    const std::size_t sep = what.find(": ", prefix.size());
    const std::size_t colon = sep == std::string::npos ? sep : what.rfind(':', sep - 1);
    if (colon != std::string::npos && colon > prefix.size()) {
      const std::string line = what.substr(colon + 1, sep - colon - 1);
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos)
        return InputError(fmt::format("{}:{}:1: xml: {}", file, line, what.substr(sep + 2)));
    }
  }
  return InputError(fmt::format("{}:1:1: xml: {}", file, what));
}

// The values SimGrid parsed, whatever unit the file used: a link the engine would divide by zero on, or run
// backwards in time, is refused where the file declares it.
void check_link_values(const sg4::Engine& engine, const XmlPlatform& xml) {
  for (const sg4::Link* link : engine.get_all_links()) {
    std::string name = link->get_name();
    for (const char* suffix : {"_UP", "_DOWN"})  // a SPLITDUPLEX link is two SimGrid links
      if (xml.link_position(name).empty() && name.size() > std::strlen(suffix) &&
          name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        name.resize(name.size() - std::strlen(suffix));
    const std::string at = xml.link_position(name).empty() ? xml.file() + ":1:1" : xml.link_position(name);
    const double bw = link->get_bandwidth(), lat = link->get_latency();
    if (!std::isfinite(bw) || bw <= 0 || bw > limits::kMaxBandwidth_Bps)
      throw InputError(fmt::format("{}: link.bandwidth: link '{}' has {:g} B/s: it must be positive and at most {:g}",
                                   at, name, bw, limits::kMaxBandwidth_Bps));
    if (!std::isfinite(lat) || lat < 0 || lat > limits::kMaxTime_s)
      throw InputError(fmt::format("{}: link.latency: link '{}' has {:g} s: it must be in [0, {:g}]", at, name, lat,
                                   limits::kMaxTime_s));
  }
}

}  // namespace

std::vector<sg4::Host*> build_simgrid_platform(sg4::Engine& engine, const PlatformSpec& spec, const GpuPairs& pairs,
                                               const RankSymmetry* fold) {
  if (spec.xml) {
    if (fold) throw std::logic_error("an XML platform cannot be folded by a symmetry");
    spec.xml->check_routes(pairs);  // before SimGrid, whose Floyd and Dijkstra zones abort on a missing route
    try {
      engine.load_platform(spec.xml_file);
    } catch (const std::exception& e) {
      throw located_parse_error(spec.xml->file(), e.what());
    }
    check_link_values(engine, *spec.xml);
    std::vector<sg4::Host*> hosts;
    for (const auto& g : spec.gpus) hosts.push_back(engine.host_by_name(g.host_name));
    return hosts;
  }
  return build_network_copies(engine, spec, {""}, pairs, fold).front();
}

std::vector<std::vector<sg4::Host*>> build_network_copies(sg4::Engine&, const PlatformSpec& spec,
                                                          const std::vector<std::string>& prefixes,
                                                          const GpuPairs& pairs, const RankSymmetry* fold) {
  const Topology topo(spec);
  // Hosts for the GPUs that send or receive only: SimGrid's flat zone keeps a table of (hosts x hosts) routes, so a
  // workload on 8 GPUs of a 65,536-GPU cluster costs what 8 GPUs cost. Links exist for every GPU (routes relay).
  std::vector<bool> endpoint(spec.gpus.size(), false);
  for (const auto& [s, d] : pairs) endpoint[s] = endpoint[d] = true;
  const auto endpoints = static_cast<double>(std::count(endpoint.begin(), endpoint.end(), true) * prefixes.size());
  constexpr double kMaxRouteTable_bytes = 8.0 * (1ull << 30);  // 8 bytes per (host, host) slot
  if (endpoints * endpoints * 8 > kMaxRouteTable_bytes)
    throw WorkloadTooLarge(fmt::format("{:.0f} GPUs exchange data: the engine's flat route table would take {:.1f} GiB "
                                       "(8 bytes per GPU pair), past {:.0f} GiB; simulate fewer GPUs",
                                       endpoints, endpoints * endpoints * 8 / (1ull << 30),
                                       kMaxRouteTable_bytes / (1ull << 30)),
                           "platform");
  auto* zone = sg4::create_full_zone("world");
  std::vector<std::vector<sg4::Host*>> copies;
  for (const auto& prefix : prefixes) {
    std::vector<sg4::Host*> hosts;
    for (std::size_t g = 0; g < spec.gpus.size(); ++g)
      hosts.push_back(endpoint[g] ? zone->create_host(prefix + spec.gpus[g].host_name, spec.gpu.bf16_flops)->seal()
                                  : nullptr);
    std::vector<sg4::Link*> links;
    for (const auto& l : topo.links())
      links.push_back(zone->create_split_duplex_link(prefix + l.name, l.bw_Bps)->set_latency(l.latency_s)->seal());
    using Dir = sg4::LinkInRoute::Direction;
    std::vector<sg4::LinkInRoute> route;
    for (const auto& [s, d] : pairs) {
      if (s == d) continue;
      route.clear();
      for (const auto& hop : topo.route(s, d))
        route.emplace_back(links[fold ? fold->representative_link(hop.link) : hop.link], hop.up ? Dir::UP : Dir::DOWN);
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
