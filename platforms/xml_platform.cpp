#include "platforms/xml_platform.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <expat.h>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <optional>
#include <cctype>
#include <set>

#include "sim/scenario/input_limits.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace {

constexpr std::size_t kMaxXmlHosts = 32768;

std::uint64_t pair_key(int a, int b) { return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b); }

// n<node>g<gpu>, numbers of 1 to 5 digits (kMaxGpus is 65,536): cpsim reads which GPUs share a node from the name.
std::optional<GpuSlot> parse_gpu_name(const std::string& name) {
  auto digits = [&](std::size_t from, std::size_t& to) {
    to = from;
    while (to < name.size() && std::isdigit(static_cast<unsigned char>(name[to]))) ++to;
    return to > from && to - from <= 5;
  };
  std::size_t node_end = 0, gpu_end = 0;
  if (name.empty() || name[0] != 'n' || !digits(1, node_end) || node_end >= name.size() || name[node_end] != 'g' ||
      !digits(node_end + 1, gpu_end) || gpu_end != name.size())
    return std::nullopt;
  return GpuSlot{name, std::stoi(name.substr(1, node_end - 1)), std::stoi(name.substr(node_end + 1))};
}

struct Position {
  int line = 0, column = 0;
};

struct HostEntry {
  GpuSlot slot;
  Position at;
};

struct LinkEntry {
  bool split_duplex = false;
  Position at;
};

// The expat callbacks: they record what the checks need and stop at the first mistake (exceptions must not cross
// expat's C frames, so the error is kept and thrown once the parser has returned).
class Collector {
 public:
  Collector(std::string file, XML_Parser parser) : file_(std::move(file)), parser_(parser) {}

  void start(const std::string& element, const char** attributes) {
    if (error_) return;
    const Position at = here();
    std::map<std::string, std::string> attrs;
    for (int i = 0; attributes[i]; i += 2) attrs[attributes[i]] = attributes[i + 1];
    const std::string parent = stack_.empty() ? "" : stack_.back();
    stack_.push_back(element);
    if (element == "prop") {  // properties carry no cost; SimGrid reads them. One is cpsim's: a cluster's node size
      if (parent == "cluster" && attrs.count("id") && attrs.at("id") == "cpsim.gpus_per_node")
        cluster_gpus_per_node(attrs.count("value") ? attrs.at("value") : "", at);
      return;
    }
    if (element == "cluster" && parent == "platform") return cluster(attrs, at);
    if (!allowed_under(element, parent)) {
      if (element == "cluster" || element == "cabinet")
        return fail(at, element, fmt::format("<{}> is read by cpsim only as the platform's one zone (<platform>"
                                             "<cluster .../></platform>); otherwise write each GPU as a <host> named "
                                             "n<node>g<gpu> with its links and routes (`cpsim platform --emit-xml` "
                                             "writes that form)", element));
      if (element == "config")
        return fail(at, element, "<config> is refused: cpsim sets SimGrid's network model itself (docs/platform.md)");
      if (element == "zone" && parent == "zone")
        return fail(at, element, "nested zones are not read by cpsim: put every host, link and route in one <zone>");
      return fail(at, element, fmt::format("<{}> is not expected {}", element,
                                           parent.empty() ? "as the document root (want <platform>)"
                                                          : fmt::format("inside <{}>", parent)));
    }
    if (element == "platform") platform(attrs, at);
    else if (element == "zone") zone(attrs, at);
    else if (element == "host") host(attrs, at);
    else if (element == "router") router(attrs, at);
    else if (element == "link") link(attrs, at);
    else if (element == "route") route(attrs, at);
    else if (element == "link_ctn") link_ctn(attrs, at);
  }
  void doctype() { saw_doctype_ = true; }
  void end() {
    if (!stack_.empty() && stack_.back() == "cluster" && !error_) cluster_hosts();
    if (!stack_.empty()) stack_.pop_back();
  }

  const std::optional<std::string>& error() const { return error_; }
  std::string position(const Position& at) const { return fmt::format("{}:{}:{}", file_, at.line, at.column); }
  void fail(const Position& at, const std::string& path, const std::string& message) {
    if (error_) return;
    error_ = fmt::format("{}: {}: {}", position(at), path, message);
    XML_StopParser(parser_, XML_FALSE);
  }
  Position here() const {
    return {static_cast<int>(XML_GetCurrentLineNumber(parser_)),
            static_cast<int>(XML_GetCurrentColumnNumber(parser_)) + 1};
  }

  std::vector<HostEntry> hosts;
  std::map<std::string, int> vertex;  // host or router name -> routing vertex
  std::map<std::string, LinkEntry> links;
  std::optional<Position> zone_at;
  std::unordered_set<std::uint64_t> routes;
  std::map<std::uint64_t, Position> route_at;
  bool every_pair_routed = false;  // a <cluster> routes every pair through its private links (and backbone)

 private:
  static bool allowed_under(const std::string& element, const std::string& parent) {
    static const std::set<std::string> in_zone{"host", "router", "link", "route"};
    if (element == "platform") return parent.empty();
    if (element == "zone") return parent == "platform";
    if (element == "link_ctn") return parent == "route";
    return in_zone.count(element) && parent == "zone";
  }

  std::optional<std::string> required(const std::map<std::string, std::string>& attrs, const std::string& name,
                                      const std::string& element, const Position& at) {
    auto it = attrs.find(name);
    if (it == attrs.end() || it->second.empty()) {
      fail(at, element + "." + name, fmt::format("<{}> needs a non-empty '{}'", element, name));
      return std::nullopt;
    }
    return it->second;
  }

  // SimGrid's parser needs both: a file without them fails inside the engine.
  void platform(const std::map<std::string, std::string>& attrs, const Position& at) {
    if (!saw_doctype_)
      return fail(at, "platform", "SimGrid needs <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\"> "
                                  "before <platform>");
    auto version = required(attrs, "version", "platform", at);
    if (version && std::strtod(version->c_str(), nullptr) < 4.1)
      fail(at, "platform.version", fmt::format("'{}': SimGrid 3.32 reads platform version 4.1", *version));
  }

  void zone(const std::map<std::string, std::string>& attrs, const Position& at) {
    if (zone_at) return fail(at, "zone", fmt::format("a second <zone> (the first is at line {}): cpsim reads one",
                                                     zone_at->line));
    zone_at = at;
    auto r = required(attrs, "routing", "zone", at);
    if (!r) return;
    // Full: one explicit route per pair, what `cpsim platform --emit-xml` writes. SimGrid 3.32's Floyd and Dijkstra
    // zones fail inside the engine on hosts routed through a router, so cpsim does not offer them.
    if (*r != "Full")
      return fail(at, "zone.routing", fmt::format("'{}': cpsim reads Full zones (an explicit <route> per GPU pair)", *r));
  }

  bool declare_vertex(const std::string& name, const std::string& element, const Position& at) {
    if (vertex.count(name)) {
      fail(at, element + ".id", fmt::format("'{}' is declared twice", name));
      return false;
    }
    vertex.emplace(name, static_cast<int>(vertex.size()));
    return true;
  }

  void host(const std::map<std::string, std::string>& attrs, const Position& at) {
    auto id = required(attrs, "id", "host", at);
    if (!id) return;
    const auto slot = parse_gpu_name(*id);
    if (!slot)
      return fail(at, "host.id", fmt::format("'{}' is not named n<node>g<gpu> (e.g. n0g3): cpsim reads which GPUs "
                                             "share a node from the names", *id));
    if (!declare_vertex(*id, "host", at)) return;
    // SimGrid's Full zone holds a (hosts x hosts) table of 8-byte slots: 32,768 hosts already take 8 GiB.
    if (vertex.size() > kMaxXmlHosts)
      return fail(at, "host", fmt::format("more than {} hosts: SimGrid's Full zone would need {} GiB for its route "
                                          "table; generate large clusters from a preset instead", kMaxXmlHosts,
                                          kMaxXmlHosts * kMaxXmlHosts * 8 >> 30));
    hosts.push_back({*slot, at});
  }

  void router(const std::map<std::string, std::string>& attrs, const Position& at) {
    if (auto id = required(attrs, "id", "router", at)) declare_vertex(*id, "router", at);
  }

  // A quantity SimGrid will parse: refused here when its number is missing, not finite or out of sign; checked
  // against cpsim's range when the unit is one cpsim knows (the engine checks the value SimGrid parsed either way).
  void quantity(const std::string& text, const std::string& path, bool bandwidth, const Position& at) {
    errno = 0;
    char* end = nullptr;
    const double number = std::strtod(text.c_str(), &end);
    if (end == text.c_str())
      return fail(at, path, fmt::format("'{}' is not a {} (e.g. {})", text, bandwidth ? "bandwidth" : "time",
                                        bandwidth ? "450GBps" : "1us"));
    if (!std::isfinite(number) || errno == ERANGE) return fail(at, path, fmt::format("'{}' is not finite", text));
    if (bandwidth && number <= 0) return fail(at, path, fmt::format("'{}' must be positive", text));
    if (!bandwidth && number < 0) return fail(at, path, fmt::format("'{}' must not be negative", text));
    const auto value = bandwidth ? parse_bandwidth_Bps(text) : parse_time_s(text);
    const double max = bandwidth ? limits::kMaxBandwidth_Bps : limits::kMaxTime_s;
    if (value && (!std::isfinite(*value) || *value > max))
      return fail(at, path, fmt::format("'{}' is above the limit of {:g} {}", text, max, bandwidth ? "B/s" : "s"));
  }

  void link(const std::map<std::string, std::string>& attrs, const Position& at) {
    auto id = required(attrs, "id", "link", at);
    if (!id) return;
    if (links.count(*id))
      return fail(at, "link.id", fmt::format("link '{}' is declared twice (first at line {})", *id, links[*id].at.line));
    auto bw = required(attrs, "bandwidth", "link", at);
    if (!bw) return;
    if (bw->find(',') != std::string::npos)
      return fail(at, "link.bandwidth", "one bandwidth per link (several are for WIFI links, which cpsim does not read)");
    quantity(*bw, "link.bandwidth", true, at);
    if (attrs.count("latency")) quantity(attrs.at("latency"), "link.latency", false, at);
    const std::string policy = attrs.count("sharing_policy") ? attrs.at("sharing_policy") : "SHARED";
    static const std::set<std::string> policies{"SHARED", "SPLITDUPLEX", "FATPIPE"};
    if (!policies.count(policy))
      return fail(at, "link.sharing_policy", fmt::format("'{}': cpsim models SHARED, SPLITDUPLEX and FATPIPE links",
                                                         policy));
    links[*id] = {policy == "SPLITDUPLEX", at};
  }

  // SimGrid's FLAT <cluster> as the whole platform: hosts prefix<i>suffix for each i of the radical, each with a
  // private link <id>_link_<i> (and an optional backbone <id>_backbone) that every route crosses, so every pair is
  // routed. Hosts named n<node>g<gpu> place themselves; otherwise <prop id="cpsim.gpus_per_node" value="G"/> puts
  // hosts 0..G-1 (in radical order) on node 0, the next G on node 1, ...; without it the cluster is one node.
  void cluster(const std::map<std::string, std::string>& attrs, const Position& at) {
    if (zone_at) return fail(at, "cluster", fmt::format("a second zone (the first is at line {}): cpsim reads one",
                                                        zone_at->line));
    zone_at = at;
    cluster_at_ = at;
    every_pair_routed = true;
    const auto id = required(attrs, "id", "cluster", at);
    const auto prefix = id ? required(attrs, "prefix", "cluster", at) : std::nullopt;
    const auto radical = prefix ? required(attrs, "radical", "cluster", at) : std::nullopt;
    const auto speed = radical ? required(attrs, "speed", "cluster", at) : std::nullopt;
    const auto bw = speed ? required(attrs, "bw", "cluster", at) : std::nullopt;
    const auto lat = bw ? required(attrs, "lat", "cluster", at) : std::nullopt;
    if (!lat) return;
    const std::string topology = attrs.count("topology") ? attrs.at("topology") : "FLAT";
    if (topology != "FLAT")
      return fail(at, "cluster.topology", fmt::format("'{}': cpsim reads FLAT clusters (a star of private links); "
                                                      "write other topologies as hosts, links and routes", topology));
    quantity(*bw, "cluster.bw", true, at);
    quantity(*lat, "cluster.lat", false, at);
    if (attrs.count("bb_bw")) quantity(attrs.at("bb_bw"), "cluster.bb_bw", true, at);
    if (attrs.count("bb_lat")) quantity(attrs.at("bb_lat"), "cluster.bb_lat", false, at);
    for (const char* key : {"sharing_policy", "bb_sharing_policy"}) {
      static const std::set<std::string> policies{"SHARED", "SPLITDUPLEX", "FATPIPE"};
      if (attrs.count(key) && !policies.count(attrs.at(key)))
        return fail(at, std::string("cluster.") + key,
                    fmt::format("'{}': cpsim models SHARED, SPLITDUPLEX and FATPIPE links", attrs.at(key)));
    }
    const std::string suffix = attrs.count("suffix") ? attrs.at("suffix") : "";
    const bool split = attrs.count("sharing_policy") && attrs.at("sharing_policy") == "SPLITDUPLEX";
    for (const int i : radicals(*radical, at)) {
      if (error_) return;
      cluster_names_.push_back(*prefix + std::to_string(i) + suffix);
      links[*id + "_link_" + std::to_string(i)] = {split, at};
    }
    if (attrs.count("bb_bw")) links[*id + "_backbone"] = {false, at};
  }

  // "0-7" or "0-3,8-11,16": the numbers in order, each once.
  std::vector<int> radicals(const std::string& text, const Position& at) {
    std::vector<int> out;
    std::set<int> seen;
    std::size_t from = 0;
    while (from <= text.size()) {
      const std::size_t comma = std::min(text.find(',', from), text.size());
      const std::string item = text.substr(from, comma - from);
      const std::size_t dash = item.find('-');
      int first = 0, last = 0;
      const auto number = [](const std::string& t, int& v) {
        if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos) return false;
        v = std::stoi(t);
        return true;
      };
      if (!(dash == std::string::npos ? number(item, first) && number(item, last)
                                      : number(item.substr(0, dash), first) && number(item.substr(dash + 1), last)) ||
          last < first) {
        fail(at, "cluster.radical", fmt::format("'{}': want numbers and ranges such as 0-7 or 0-3,8-11", text));
        return {};
      }
      for (int i = first; i <= last; ++i) {
        if (!seen.insert(i).second) {
          fail(at, "cluster.radical", fmt::format("'{}' names {} twice", text, i));
          return {};
        }
        if (seen.size() > kMaxXmlHosts) {
          fail(at, "cluster.radical", fmt::format("more than {} hosts", kMaxXmlHosts));
          return {};
        }
        out.push_back(i);
      }
      from = comma + 1;
    }
    return out;
  }

  void cluster_gpus_per_node(const std::string& value, const Position& at) {
    if (value.empty() || value.size() > 5 || value.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(value) < 1)
      return fail(at, "cluster.prop.cpsim.gpus_per_node", fmt::format("'{}' is not a positive whole number", value));
    cluster_gpus_per_node_ = std::stoi(value);
  }

  // At </cluster>: its hosts as GPUs, by name or by cpsim.gpus_per_node.
  void cluster_hosts() {
    const auto count = static_cast<int>(cluster_names_.size());
    bool named = cluster_gpus_per_node_ == 0;
    for (const auto& name : cluster_names_) named = named && parse_gpu_name(name).has_value();
    const int per_node = cluster_gpus_per_node_ ? cluster_gpus_per_node_ : count;
    if (!named && count % per_node != 0)
      return fail(cluster_at_, "cluster.prop.cpsim.gpus_per_node",
                  fmt::format("{} hosts do not split into nodes of {} GPUs", count, per_node));
    for (int i = 0; i < count; ++i) {
      const std::string& name = cluster_names_[i];
      if (!declare_vertex(name, "cluster", cluster_at_)) return;
      hosts.push_back({named ? *parse_gpu_name(name) : GpuSlot{name, i / per_node, i % per_node}, cluster_at_});
    }
  }

  void add_route(int src, int dst, const Position& at, const std::string& names) {
    const auto key = pair_key(src, dst);
    if (!routes.insert(key).second) {
      const Position first = route_at[key];
      return fail(at, "route", fmt::format("the route {} is already declared (line {}; routes are symmetrical unless "
                                           "symmetrical=\"NO\")", names, first.line));
    }
    route_at[key] = at;
  }

  void route(const std::map<std::string, std::string>& attrs, const Position& at) {
    auto src = required(attrs, "src", "route", at);
    auto dst = src ? required(attrs, "dst", "route", at) : std::nullopt;
    if (!dst) return;
    for (const auto& [key, name] : {std::pair{"route.src", *src}, std::pair{"route.dst", *dst}})
      if (!vertex.count(name))
        return fail(at, key, fmt::format("'{}' is not a host or router declared above", name));
    const std::string sym = attrs.count("symmetrical") ? attrs.at("symmetrical") : "YES";
    if (sym != "YES" && sym != "NO" && sym != "yes" && sym != "no")
      return fail(at, "route.symmetrical", fmt::format("'{}': YES or NO", sym));
    const int s = vertex[*src], d = vertex[*dst];
    add_route(s, d, at, fmt::format("{} -> {}", *src, *dst));
    if ((sym == "YES" || sym == "yes") && s != d) add_route(d, s, at, fmt::format("{} -> {}", *dst, *src));
  }

  void link_ctn(const std::map<std::string, std::string>& attrs, const Position& at) {
    auto id = required(attrs, "id", "link_ctn", at);
    if (!id) return;
    auto it = links.find(*id);
    if (it == links.end()) return fail(at, "link_ctn.id", fmt::format("'{}' is not a link declared above", *id));
    const std::string dir = attrs.count("direction") ? attrs.at("direction") : "NONE";
    if (dir != "UP" && dir != "DOWN" && dir != "NONE")
      return fail(at, "link_ctn.direction", fmt::format("'{}': UP, DOWN or NONE", dir));
    if (it->second.split_duplex && dir == "NONE")
      return fail(at, "link_ctn.direction", fmt::format("link '{}' is SPLITDUPLEX: say which way, UP or DOWN", *id));
  }

  std::string file_;
  XML_Parser parser_;
  std::vector<std::string> stack_;
  Position cluster_at_;
  std::vector<std::string> cluster_names_;  // in radical order
  int cluster_gpus_per_node_ = 0;           // 0: from the host names, else one node
  std::optional<std::string> error_;
  bool saw_doctype_ = false;
};

// Every node 0..N-1 has GPUs 0..G-1, the same G everywhere: the summary's nodes x GPUs and the placement need it.
void check_naming(const std::vector<HostEntry>& hosts, const Collector& c) {
  std::map<int, std::vector<const HostEntry*>> by_node;
  for (const auto& h : hosts) by_node[h.slot.node].push_back(&h);
  int expected_node = 0;
  std::size_t gpus = 0;
  for (auto& [node, members] : by_node) {
    std::sort(members.begin(), members.end(),
              [](const HostEntry* a, const HostEntry* b) { return a->slot.local_gpu < b->slot.local_gpu; });
    const HostEntry& first = *members.front();
    if (node != expected_node)
      throw InputError(fmt::format("{}: host.id: '{}' is on node {}, but node {} has no host: number the nodes 0, 1, "
                                   "2, ... without gaps", c.position(first.at), first.slot.host_name, node,
                                   expected_node));
    ++expected_node;
    for (std::size_t g = 0; g < members.size(); ++g)
      if (members[g]->slot.local_gpu != int(g))
        throw InputError(fmt::format("{}: host.id: '{}' leaves GPU {} of node {} missing: number each node's GPUs "
                                     "0, 1, 2, ... without gaps", c.position(members[g]->at),
                                     members[g]->slot.host_name, g, node));
    if (gpus == 0) gpus = members.size();
    if (members.size() != gpus)
      throw InputError(fmt::format("{}: host.id: node {} has {} GPUs but node 0 has {}: every node needs the same "
                                   "GPUs", c.position(first.at), node, members.size(), gpus));
  }
}

}  // namespace

XmlPlatform read_xml_platform(const std::string& path, const std::string& file) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}:1:1: platform: cannot read the file", file));
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, decltype(&XML_ParserFree)> parser(XML_ParserCreate(nullptr),
                                                                                     &XML_ParserFree);
  Collector c(file, parser.get());
  XML_SetUserData(parser.get(), &c);
  XML_SetElementHandler(
      parser.get(),
      [](void* self, const XML_Char* name, const XML_Char** attrs) { static_cast<Collector*>(self)->start(name, attrs); },
      [](void* self, const XML_Char*) { static_cast<Collector*>(self)->end(); });
  XML_SetStartDoctypeDeclHandler(parser.get(), [](void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    static_cast<Collector*>(self)->doctype();
  });
  std::vector<char> chunk(1 << 20);
  std::size_t total = 0;
  for (bool last = false; !last;) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    last = got < chunk.size();
    total += got;
    if (total > limits::kMaxPlatformFile_bytes)
      throw InputError(fmt::format("{}:1:1: platform: the file is larger than {} MiB", file,
                                   limits::kMaxPlatformFile_bytes >> 20));
    if (XML_Parse(parser.get(), chunk.data(), static_cast<int>(got), last) == XML_STATUS_ERROR) {
      if (c.error()) throw InputError(*c.error());
      throw InputError(fmt::format("{}: xml: {}", c.position(c.here()), XML_ErrorString(XML_GetErrorCode(parser.get()))));
    }
  }
  if (c.error()) throw InputError(*c.error());
  if (!c.zone_at) throw InputError(fmt::format("{}:1:1: platform: no <zone> (want <platform><zone routing=\"Full\">)", file));
  if (c.hosts.empty()) throw InputError(fmt::format("{}: zone: no <host>", c.position(*c.zone_at)));
  check_naming(c.hosts, c);

  XmlPlatform p;
  p.file_ = file;
  p.zone_position_ = c.position(*c.zone_at);
  std::vector<HostEntry> hosts = c.hosts;
  std::sort(hosts.begin(), hosts.end(), [](const HostEntry& a, const HostEntry& b) {
    return std::tie(a.slot.node, a.slot.local_gpu) < std::tie(b.slot.node, b.slot.local_gpu);
  });
  for (const auto& h : hosts) {
    p.gpus_.push_back(h.slot);
    p.vertex_of_gpu_.push_back(c.vertex.at(h.slot.host_name));
  }
  p.nodes_ = p.gpus_.back().node + 1;
  p.gpus_per_node_ = static_cast<int>(p.gpus_.size()) / p.nodes_;
  for (const auto& [name, link] : c.links) p.link_positions_[name] = c.position(link.at);
  p.routes_ = std::move(c.routes);
  p.every_pair_routed_ = c.every_pair_routed;
  return p;
}

std::string XmlPlatform::link_position(const std::string& link) const {
  auto it = link_positions_.find(link);
  return it == link_positions_.end() ? "" : it->second;
}

void XmlPlatform::check_routes(const std::vector<std::pair<int, int>>& pairs) const {
  if (every_pair_routed_) return;
  for (const auto& [s, d] : pairs)
    if (s != d && !routes_.count(pair_key(vertex_of_gpu_.at(s), vertex_of_gpu_.at(d))))
      throw InputError(fmt::format("{}: zone.route: no route from {} to {}, which the workload uses (a Full zone "
                                   "needs a <route> for every pair of GPUs that talk)", zone_position_,
                                   gpus_[s].host_name, gpus_[d].host_name));
}

}  // namespace cpsim
