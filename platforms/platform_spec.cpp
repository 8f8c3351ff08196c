#include "platforms/platform_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

#include <cstdio>

#include "platforms/data_dir.hpp"
#include "platforms/xml_platform.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& p) {
  // The error_code overload: a name the OS rejects (too long, bad bytes) is simply "not found", never a throw.
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string preset_file(const char* name) {
  const std::string found = find_data_file(fs::path("platforms") / name);
  if (found.empty())
    throw InputError(fmt::format("platforms/{}:1:1: (file): cpsim's bundled data not found (looked in {})", name,
                                 data_roots_text()));
  return found;
}

// A presets file and where it came from (MapReaders keep a reference to the source).
struct PresetFile {
  YAML::Node doc;
  YamlSource source;
};

const PresetFile& preset_doc(const std::string& path) {
  static std::map<std::string, PresetFile> cache;
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, PresetFile{load_yaml_file(path), {path, {}}}).first;
  return it->second;
}

const YAML::Node& presets(const char* file) { return preset_doc(preset_file(file)).doc; }

}  // namespace

std::string platform_data_file(const char* name) { return preset_file(name); }

namespace {

// Top-level keys that are not presets (the table version).
bool is_meta_key(const std::string& k) { return k == "kernels_version"; }

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (const auto& kv : map)
    if (!is_meta_key(kv.first.as<std::string>())) keys.push_back(kv.first.as<std::string>());
  return keys;
}

// An achieved fraction of a peak: in (0, 1].
double fraction(MapReader& r, const std::string& key, double fallback) {
  const double f = r.has(key) ? r.number(key) : fallback;
  if (!(f > 0 && f <= 1)) r.fail(key, fmt::format("an achieved fraction of the peak must be in (0, 1], got {}", f));
  return f;
}

double non_negative(MapReader& r, const std::string& key, double fallback) {
  const double v = r.has(key) ? r.number(key) : fallback;
  if (!(v >= 0)) r.fail(key, fmt::format("must not be negative, got {}", v));
  return v;
}

KernelCalibration read_kernel_table(MapReader& k, int version) {
  KernelCalibration c;
  c.version = version;
  c.launch_overhead_s = k.time_s("launch_overhead");
  c.graph_launch_overhead_s = k.time_s_opt("graph_launch_overhead").value_or(c.launch_overhead_s);
  if (c.graph_launch_overhead_s < 0) k.fail("graph_launch_overhead", "must not be negative");
  {
    MapReader g = k.map("gemm");
    c.gemm_tile_m = static_cast<int>(g.integer("tile_m", 1));
    c.gemm_tile_n = static_cast<int>(g.integer("tile_n", 1));
    c.gemm_bf16 = fraction(g, "bf16", g.number("bf16"));
    c.gemm_fp8 = fraction(g, "fp8", c.gemm_bf16);
    c.gemm_k_half = non_negative(g, "k_half", 0);
    g.finish();
  }
  {
    MapReader a = k.map("attention");
    c.attn_q_tile = static_cast<int>(a.integer("q_tile", 1));
    c.attn_kv_tile = static_cast<int>(a.integer("kv_tile", 1));
    c.attn_bf16 = fraction(a, "bf16", a.number("bf16"));
    c.attn_fp8 = fraction(a, "fp8", c.attn_bf16);
    c.attn_lk_half_tokens = non_negative(a, "lk_half_tokens", a.number("lk_half_tokens"));
    c.attn_diag_extra = non_negative(a, "diag_extra", a.number("diag_extra"));
    a.finish();
  }
  c.memory = fraction(k, "memory", k.number("memory"));
  if (c.launch_overhead_s < 0) k.fail("launch_overhead", "must not be negative");
  k.finish();
  return c;
}

int table_version(const YAML::Node& doc) {
  // A presets file without kernels_version is taken to follow the current table format.
  const YAML::Node v = doc.IsMap() ? doc["kernels_version"] : YAML::Node();
  return v.IsDefined() && v.IsScalar() ? v.as<int>() : 1;
}

// Where GPU presets are looked up: a user presets file (platform.presets) first, then platforms/gpus.yaml.
struct GpuCatalog {
  const PresetFile* user = nullptr;
  const PresetFile& builtin() const { return preset_doc(preset_file("gpus.yaml")); }
  const PresetFile* find(const std::string& key) const {
    if (user && user->doc[key].IsDefined() && !is_meta_key(key)) return user;
    if (builtin().doc[key].IsDefined() && !is_meta_key(key)) return &builtin();
    return nullptr;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out = user ? keys_of(user->doc) : std::vector<std::string>{};
    for (const auto& k : keys_of(builtin().doc))
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
  }
};

GpuSpec read_gpu_entry(MapReader& r, const std::string& key, const GpuCatalog& catalog, int version, int depth);

// `kernels:` of a GPU entry: a table, or the name of a preset whose table to use.
KernelCalibration read_kernels(MapReader& r, const GpuCatalog& catalog, int version, int depth) {
  if (!r.has("kernels")) return {};
  const YAML::Node n = r.node("kernels");
  if (n.IsScalar()) {
    const std::string name = n.Scalar();
    const PresetFile* file = catalog.find(name);
    if (!file) r.fail("kernels", fmt::format("unknown GPU preset '{}' (known: {})", name, fmt::join(catalog.names(), ", ")));
    if (depth > 4) r.fail("kernels", "kernel tables name each other in a cycle");
    MapReader other(file->doc[name], file->source, name);
    const KernelCalibration c = read_gpu_entry(other, name, catalog, table_version(file->doc), depth + 1).kernels;
    if (c.version == 0) r.fail("kernels", fmt::format("preset '{}' has no kernels table", name));
    return c;
  }
  MapReader k = r.map("kernels");
  return read_kernel_table(k, version);
}

GpuSpec read_gpu_entry(MapReader& r, const std::string& key, const GpuCatalog& catalog, int version, int depth) {
  GpuSpec g;
  g.key = key;
  g.name = r.text_or("name", key);
  g.bf16_flops = r.flops_or("bf16", 0);
  g.fp8_flops = r.flops_or("fp8", g.bf16_flops);
  g.hbm_bytes = r.size_bytes_or("hbm", 0);
  g.hbm_bw_Bps = r.bandwidth_Bps("hbm_bw");
  g.sm_count = static_cast<int>(r.integer("sms", 1));
  if (g.bf16_flops <= 0) r.fail("bf16", "must be positive");
  if (g.hbm_bw_Bps <= 0) r.fail("hbm_bw", "must be positive");
  if (r.has("efficiency")) {
    MapReader e = r.map("efficiency");
    g.efficiency.gemm = e.number_or("gemm", g.efficiency.gemm);
    g.efficiency.attention = e.number_or("attention", g.efficiency.attention);
    g.efficiency.memory = e.number_or("memory", g.efficiency.memory);
    e.finish();
  }
  g.kernels = read_kernels(r, catalog, version, depth);
  r.finish();
  return g;
}

GpuSpec catalog_preset(const GpuCatalog& catalog, const std::string& key) {
  const PresetFile* file = catalog.find(key);
  if (!file) throw std::out_of_range(key);
  MapReader r(file->doc[key], file->source, key);
  return read_gpu_entry(r, key, catalog, table_version(file->doc), 0);
}

// platform.gpu: a preset name, or a mapping {name, bf16, fp8, hbm, hbm_bw, sms, kernels} read in place.
GpuSpec read_platform_gpu(MapReader& r, const std::string& fallback_key, const GpuCatalog& catalog) {
  if (r.has("gpu") && r.node("gpu").IsMap()) {
    MapReader g = r.map("gpu");
    const std::string name = g.text("name");
    return read_gpu_entry(g, name, catalog, table_version(catalog.builtin().doc), 0);
  }
  const std::string key = r.has("gpu") ? r.choice("gpu", catalog.names()) : fallback_key;
  try {
    return catalog_preset(catalog, key);
  } catch (const std::out_of_range&) {
    r.fail("gpu", fmt::format("unknown GPU preset '{}'", key));
  }
}

}  // namespace

std::string resolve_input_path(const std::string& path, const std::string& source_dir) {
  // Never the working directory: the same scenario gives the same result from any folder.
  if (fs::path(path).is_absolute()) return is_file(path) ? path : "";
  const fs::path beside = fs::path(source_dir.empty() ? "." : source_dir) / path;
  if (is_file(beside)) return fs::absolute(beside).lexically_normal().string();
  return find_data_file(path);
}

std::string display_path(const std::string& absolute_path) {
  std::error_code ec;
  const fs::path relative = fs::path(absolute_path).lexically_proximate(fs::current_path(ec));
  if (ec || relative.empty() || relative.is_absolute() || *relative.begin() == "..") return absolute_path;
  return relative.string();
}

GpuSpec gpu_preset(const std::string& key) { return catalog_preset(GpuCatalog{}, key); }

std::vector<std::string> gpu_preset_names() { return keys_of(presets("gpus.yaml")); }
std::vector<std::string> cluster_preset_names() { return keys_of(presets("clusters.yaml")); }

PlatformSpec read_platform(MapReader& r, const std::string& source_dir) {
  PlatformSpec p;
  GpuCatalog catalog;
  if (r.has("presets")) {
    const std::string file = r.text("presets");
    const std::string path = resolve_input_path(file, source_dir);
    if (path.empty()) r.fail("presets", fmt::format("presets file '{}' not found", file));
    catalog.user = &preset_doc(path);
    if (!catalog.user->doc.IsMap()) r.fail("presets", fmt::format("{} is not a mapping of GPU presets", path));
  }
  std::string gpu_key;
  if (r.has("file")) {
    if (r.has("preset")) r.fail("preset", "give either 'preset' or 'file', not both");
    const std::string file = r.text("file");
    p.xml_file = resolve_input_path(file, source_dir);
    if (p.xml_file.empty()) r.fail("file", fmt::format("platform file '{}' not found", file));
    if (!r.has("gpu")) r.fail_here("an XML platform needs 'gpu' (a preset name or a mapping)");
    p.xml = std::make_shared<const XmlPlatform>(read_xml_platform(p.xml_file, display_path(p.xml_file)));
    p.gpus = p.xml->gpus();
    p.nodes = p.xml->nodes();
    p.gpus_per_node = p.xml->gpus_per_node();
  } else {
    const std::string preset = r.choice("preset", cluster_preset_names());
    static YamlSource source{preset_file("clusters.yaml"), {}};
    MapReader c(presets("clusters.yaml")[preset], source, preset);
    p.preset = preset;
    gpu_key = c.text("gpu");
    (void)c.text_or("calibration", "");
    p.gpus_per_node = static_cast<int>(r.integer_or("gpus_per_node", c.integer("gpus_per_node"), 1, limits::kMaxGpus));
    p.nodes = static_cast<int>(r.integer_or("nodes", 1, 1, limits::kMaxGpus));
    if (std::int64_t(p.nodes) * p.gpus_per_node > limits::kMaxGpus)
      r.fail("nodes", fmt::format("{} nodes x {} GPUs = {} GPUs: at most {} are supported", p.nodes, p.gpus_per_node,
                                  std::int64_t(p.nodes) * p.gpus_per_node, limits::kMaxGpus));
    p.nvlink_bw_Bps = r.bandwidth_Bps_opt("nvlink_bw").value_or(c.bandwidth_Bps("nvlink_bw"));
    p.nvlink_latency_s = r.time_s_opt("nvlink_latency").value_or(c.time_s("nvlink_latency"));
    p.nic_bw_Bps = r.bandwidth_Bps_opt("nic_bw").value_or(c.bandwidth_Bps("nic_bw"));
    p.nic_latency_s = r.time_s_opt("nic_latency").value_or(c.time_s("nic_latency"));
    c.finish();
    for (const char* key : {"nvlink_bw", "nic_bw"})
      if (r.has(key) && r.bandwidth_Bps(key) <= 0) r.fail(key, "must be positive");
    for (int n = 0; n < p.nodes; ++n)
      for (int g = 0; g < p.gpus_per_node; ++g) p.gpus.push_back({fmt::format("n{}g{}", n, g), n, g});
    if (r.has("link_bw")) {
      if (!r.node("link_bw").IsMap()) r.fail("link_bw", "expected a mapping of port names to bandwidths");
      MapReader ports = r.map("link_bw");
      for (const auto& entry : ports.self()) {
        const std::string name = key_name(entry.first, ports.source(), ports.path());
        int node = -1, gpu = -1;
        char kind[4] = {};
        char rest = 0;
        const bool parsed = std::sscanf(name.c_str(), "n%d_%3[a-z]%d%c", &node, kind, &gpu, &rest) == 3 &&
                            (std::string(kind) == "nvl" || std::string(kind) == "nic") &&
                            name == fmt::format("n{}_{}{}", node, kind, gpu);
        if (!parsed || node < 0 || node >= p.nodes || gpu < 0 || gpu >= p.gpus_per_node)
          ports.fail(name, fmt::format("no port '{}': ports are n<node>_nvl<gpu> and n<node>_nic<gpu>, node < {}, "
                                       "gpu < {}", name, p.nodes, p.gpus_per_node));
        const double bw = ports.bandwidth_Bps(name);
        if (bw <= 0) ports.fail(name, "must be positive");
        p.port_bw_Bps[name] = bw;
      }
      ports.finish();
    }
  }
  p.gpu = read_platform_gpu(r, gpu_key, catalog);
  // The cluster preset names its calibration; a scenario may choose another, or the ideal machine.
  const std::string preset_calibration =
      p.preset.empty() ? "nccl-h100-ib"
                       : presets("clusters.yaml")[p.preset]["calibration"].as<std::string>("nccl-h100-ib");
  p.calibration = r.has("calibration") ? r.text("calibration") : preset_calibration;
  if (p.calibration == "default") p.calibration = preset_calibration;
  p.network = read_network_calibration(p.calibration, r, "calibration");
  // The shaped kernel model runs unless the scenario asks for the ideal machine; a GPU without a kernels table
  // has nothing to shape with.
  p.gpu.kernels.shaped = !p.ideal();
  if (p.gpu.kernels.shaped && p.gpu.kernels.version == 0)
    r.fail("gpu", fmt::format("GPU '{}' has no kernels table (needed unless platform.calibration: ideal)", p.gpu.key));
  r.finish();
  return p;
}

}  // namespace cpsim
