#include "platforms/platform_spec.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <sstream>

#include "sim/yaml_reader.hpp"

namespace cpsim {
namespace fs = std::filesystem;
namespace {

std::string preset_file(const char* name) { return std::string(CPSIM_SOURCE_DIR) + "/platforms/" + name; }

const YAML::Node& presets(const char* file) {
  static std::map<std::string, YAML::Node> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, load_yaml_file(preset_file(file))).first;
  return it->second;
}

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (const auto& kv : map) keys.push_back(kv.first.as<std::string>());
  return keys;
}

GpuSpec read_gpu(const YAML::Node& node, const std::string& key) {
  static YamlSource source{preset_file("gpus.yaml"), {}};
  MapReader r(node, source, key);
  GpuSpec g;
  g.key = key;
  g.name = r.text("name");
  g.bf16_flops = r.flops_or("bf16", 0);
  g.fp8_flops = r.flops_or("fp8", g.bf16_flops);
  g.hbm_bytes = r.size_bytes_or("hbm", 0);
  g.hbm_bw_Bps = r.bandwidth_Bps("hbm_bw");
  g.sm_count = static_cast<int>(r.integer("sms", 1));
  if (r.has("efficiency")) {
    MapReader e = r.map("efficiency");
    g.efficiency.gemm = e.number_or("gemm", g.efficiency.gemm);
    g.efficiency.attention = e.number_or("attention", g.efficiency.attention);
    g.efficiency.memory = e.number_or("memory", g.efficiency.memory);
    e.finish();
  }
  r.finish();
  return g;
}

// Scans a SimGrid XML platform for its hosts. GPUs must be named n<node>g<gpu> (as `cpsim platform --emit-xml`
// writes them) so that cpsim knows which GPUs share a node.
std::vector<GpuSlot> scan_xml_hosts(const std::string& file, MapReader& r) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string xml = text.str();
  static const std::regex host_re(R"RE(<host\s+[^>]*id\s*=\s*"([^"]*)")RE");
  static const std::regex name_re(R"(n(\d+)g(\d+))");
  std::vector<GpuSlot> gpus;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), host_re); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    std::smatch m;
    if (!std::regex_match(name, m, name_re))
      r.fail("file", fmt::format("host '{}' in {} is not named n<node>g<gpu>", name, file));
    gpus.push_back({name, std::stoi(m[1]), std::stoi(m[2])});
  }
  if (gpus.empty()) r.fail("file", fmt::format("no <host> found in {}", file));
  std::sort(gpus.begin(), gpus.end(), [](const GpuSlot& a, const GpuSlot& b) {
    return std::tie(a.node, a.local_gpu) < std::tie(b.node, b.local_gpu);
  });
  return gpus;
}

}  // namespace

std::string resolve_input_path(const std::string& path, const std::string& source_dir) {
  // The error_code overload: a name the OS rejects (too long, bad bytes) is simply "not found", never a throw.
  auto is_file = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  if (is_file(path)) return path;
  if (fs::path(path).is_relative()) {
    if (is_file(fs::path(source_dir) / path)) return (fs::path(source_dir) / path).string();
    if (is_file(fs::path(CPSIM_SOURCE_DIR) / path)) return (fs::path(CPSIM_SOURCE_DIR) / path).string();
  }
  return "";
}

GpuSpec gpu_preset(const std::string& key) {
  const YAML::Node n = presets("gpus.yaml")[key];
  if (!n.IsDefined()) throw std::out_of_range(key);
  return read_gpu(n, key);
}

std::vector<std::string> gpu_preset_names() { return keys_of(presets("gpus.yaml")); }
std::vector<std::string> cluster_preset_names() { return keys_of(presets("clusters.yaml")); }

PlatformSpec read_platform(MapReader& r, const std::string& source_dir) {
  PlatformSpec p;
  std::string gpu_key;
  if (r.has("file")) {
    if (r.has("preset")) r.fail("preset", "give either 'preset' or 'file', not both");
    const std::string file = r.text("file");
    p.xml_file = resolve_input_path(file, source_dir);
    if (p.xml_file.empty()) r.fail("file", fmt::format("platform file '{}' not found", file));
    gpu_key = r.choice("gpu", gpu_preset_names());
    p.gpus = scan_xml_hosts(p.xml_file, r);
    p.nodes = p.gpus.back().node + 1;
    p.gpus_per_node = 0;
    for (const auto& g : p.gpus) p.gpus_per_node = std::max(p.gpus_per_node, g.local_gpu + 1);
  } else {
    const std::string preset = r.choice("preset", cluster_preset_names());
    static YamlSource source{preset_file("clusters.yaml"), {}};
    MapReader c(presets("clusters.yaml")[preset], source, preset);
    p.preset = preset;
    gpu_key = r.has("gpu") ? r.choice("gpu", gpu_preset_names()) : c.text("gpu");
    (void)c.text_or("gpu", "");
    (void)c.text_or("calibration", "");
    p.gpus_per_node = static_cast<int>(r.integer_or("gpus_per_node", c.integer("gpus_per_node"), 1));
    p.nodes = static_cast<int>(r.integer_or("nodes", 1, 1));
    p.nvlink_bw_Bps = r.bandwidth_Bps_opt("nvlink_bw").value_or(c.bandwidth_Bps("nvlink_bw"));
    p.nvlink_latency_s = r.time_s_opt("nvlink_latency").value_or(c.time_s("nvlink_latency"));
    p.nic_bw_Bps = r.bandwidth_Bps_opt("nic_bw").value_or(c.bandwidth_Bps("nic_bw"));
    p.nic_latency_s = r.time_s_opt("nic_latency").value_or(c.time_s("nic_latency"));
    c.finish();
    for (const char* key : {"nvlink_bw", "nic_bw"})
      if (r.has(key) && r.bandwidth_Bps(key) <= 0) r.fail(key, "must be positive");
    for (int n = 0; n < p.nodes; ++n)
      for (int g = 0; g < p.gpus_per_node; ++g) p.gpus.push_back({fmt::format("n{}g{}", n, g), n, g});
  }
  p.gpu = gpu_preset(gpu_key);
  // The cluster preset names its calibration; a scenario may choose another, or the ideal machine.
  const std::string preset_calibration =
      p.preset.empty() ? "nccl-h100-ib"
                       : presets("clusters.yaml")[p.preset]["calibration"].as<std::string>("nccl-h100-ib");
  p.calibration = r.has("calibration") ? r.text("calibration") : preset_calibration;
  if (p.calibration == "default") p.calibration = preset_calibration;
  p.network = read_network_calibration(p.calibration, r, "calibration");
  r.finish();
  return p;
}

}  // namespace cpsim
