#include "platforms/network_calibration.hpp"

#include <fmt/format.h>

#include "platforms/platform_spec.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace {

const YAML::Node& calibration_file() {
  static const YAML::Node root = load_yaml_file(platform_data_file("calibration.yaml"));
  return root;
}

const YamlSource& calibration_source() {
  static const YamlSource source{platform_data_file("calibration.yaml"), {}};
  return source;
}

// Three times, one per protocol (LL, LL128, Simple), each with its unit.
std::array<double, kProtocols> protocol_times(MapReader& r, const std::string& key) {
  const YAML::Node list = r.node(key);
  if (!list.IsSequence() || list.size() != kProtocols)
    fail_at(list, r.source(), r.path_of(key), "expected [LL, LL128, Simple] times, e.g. [0.6us, 1.9us, 3.4us]");
  std::array<double, kProtocols> out{};
  for (int p = 0; p < kProtocols; ++p) {
    const auto t = list[p].IsScalar() ? parse_time_s(list[p].Scalar()) : std::nullopt;
    if (!t || *t < 0) fail_at(list[p], r.source(), r.path_of(key), "expected a non-negative time such as 1us");
    out[p] = *t;
  }
  return out;
}

void read_into(NetworkCalibration& c, const std::string& name, int depth) {
  const YAML::Node node = calibration_file()[name];
  MapReader r(node, calibration_source(), name);
  if (r.has("inherit")) {
    const std::string parent = r.choice("inherit", network_calibration_names());
    if (depth > 8) r.fail("inherit", "inheritance chain too long");
    read_into(c, parent, depth + 1);
  }
  c.name = name;
  c.version = static_cast<int>(r.integer_or("version", c.version, 0));
  c.nvlink_bw_efficiency = r.number_or("nvlink_bw_efficiency", c.nvlink_bw_efficiency);
  c.nic_bw_efficiency = r.number_or("nic_bw_efficiency", c.nic_bw_efficiency);
  c.nvls_bw_efficiency = r.number_or("nvls_bw_efficiency", c.nvls_bw_efficiency);
  for (const char* key : {"nvlink_bw_efficiency", "nic_bw_efficiency", "nvls_bw_efficiency"})
    if (r.has(key) && !(r.number(key) > 0 && r.number(key) <= 1)) r.fail(key, "must be in (0, 1]");
  c.max_channels = static_cast<int>(r.integer_or("max_channels", c.max_channels, 1));
  c.nvls = r.flag_or("nvls", c.nvls);
  if (r.has("p2p_latency")) {
    MapReader p = r.map("p2p_latency");
    c.p2p_nvlink_latency_s = p.time_s("nvlink");
    c.p2p_net_latency_s = p.time_s("net");
    p.finish();
    c.alltoall_nvlink_latency_s = c.p2p_nvlink_latency_s, c.alltoall_net_latency_s = c.p2p_net_latency_s;
  }
  if (r.has("alltoall_latency")) {  // default: an all-to-all's messages cost what single messages do
    MapReader p = r.map("alltoall_latency");
    c.alltoall_nvlink_latency_s = p.time_s("nvlink");
    c.alltoall_net_latency_s = p.time_s("net");
    p.finish();
  }
  if (r.has("algorithms")) {
    MapReader a = r.map("algorithms");
    for (int i = 0; i < kCalibratedAlgorithms; ++i) {
      const char* algo = collective_algorithm_name(CollectiveAlgorithm(i));
      if (!a.has(algo)) continue;
      MapReader row = a.map(algo);
      c.algorithms[i] = {protocol_times(row, "base"), protocol_times(row, "nvlink_step"), protocol_times(row, "net_step")};
      row.finish();
    }
    a.finish();
  }
  if (r.has("protocols")) {
    MapReader p = r.map("protocols");
    const YAML::Node f = p.node("bw_factor");
    if (!f.IsSequence() || f.size() != kProtocols) p.fail("bw_factor", "expected [LL, LL128, Simple] factors");
    for (int i = 0; i < kProtocols; ++i) c.protocol_bw_factor[i] = f[i].as<double>();
    p.finish();
  }
  r.finish();
}

}  // namespace

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::LL: return "LL";
    case Protocol::LL128: return "LL128";
    default: return "Simple";
  }
}

const char* collective_algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::RING: return "ring";
    case CollectiveAlgorithm::TREE: return "tree";
    case CollectiveAlgorithm::NVLS: return "nvls";
    default: return "hierarchical";
  }
}

std::vector<std::string> network_calibration_names() {
  std::vector<std::string> names;
  for (const auto& kv : calibration_file()) names.push_back(kv.first.as<std::string>());
  return names;
}

NetworkCalibration read_network_calibration(const std::string& name, MapReader& where, const std::string& key) {
  NetworkCalibration c;
  if (name == "ideal") return c;
  std::vector<std::string> allowed = network_calibration_names();
  if (!calibration_file()[name].IsDefined())
    where.fail(key, fmt::format("unknown calibration '{}' (ideal, {})", name, fmt::join(allowed, ", ")));
  read_into(c, name, 0);
  return c;
}

}  // namespace cpsim
