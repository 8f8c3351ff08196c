// What a cluster is made of, independent of SimGrid: the GPU kind, how many nodes and GPUs per node,
// and the NVLink and NIC ports of every GPU. Built from presets (platforms/*.yaml) or a SimGrid XML file.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platforms/kernel_calibration.hpp"
#include "platforms/network_calibration.hpp"

namespace cpsim {
class MapReader;
class XmlPlatform;  // platforms/xml_platform.hpp

struct ComputeEfficiency {
  double gemm = 0.75;       // achieved / peak for dense GEMMs
  double attention = 0.6;   // achieved / peak for attention kernels
  double memory = 0.8;      // achieved / peak HBM bandwidth
};

struct GpuSpec {
  std::string key;          // preset name, e.g. "h100"
  std::string name;         // marketing name
  double bf16_flops = 0;    // dense peak, flop/s
  double fp8_flops = 0;
  double hbm_bytes = 0;
  double hbm_bw_Bps = 0;
  int sm_count = 0;
  ComputeEfficiency efficiency;  // the ideal machine's fixed efficiencies
  KernelCalibration kernels;     // the shaped model (used when kernels.shaped)
};

// One GPU of the platform, as the workload sees it.
struct GpuSlot {
  std::string host_name;  // SimGrid host, "n<node>g<gpu>"
  int node = 0;
  int local_gpu = 0;
};

struct PlatformSpec {
  std::string preset;         // cluster preset name, or "" for an XML file
  // Which cost tables the machine runs with (platforms/calibration.yaml, docs/calibration.md): a named calibration
  // (NCCL-like collectives, shaped kernel efficiencies, overheads), or "ideal", the seeds' machine (lock-step
  // single-ring collectives, fixed efficiencies, no overheads) that the closed-form tests assert.
  std::string calibration = "ideal";
  bool ideal() const { return calibration == "ideal"; }
  NetworkCalibration network;  // the calibration's collective and p2p tables (default-constructed when ideal)
  std::string xml_file;       // when set, the topology is this SimGrid XML file
  std::shared_ptr<const XmlPlatform> xml;  // its hosts, links and routes as read and checked by cpsim
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  double nvlink_bw_Bps = 0;   // per GPU port, per direction
  double nvlink_latency_s = 0;  // one-way GPU-to-GPU through the NVSwitch
  double nic_bw_Bps = 0;      // per NIC (one per GPU, own rail), per direction
  double nic_latency_s = 0;   // one-way NIC-to-NIC through the rail switch
  // platform.link_bw: ports slower (or faster) than the rest, by name ("n3_nic2", "n0_nvl5"), per direction: a
  // degraded NIC or NVLink port. The calibration's efficiency applies on top, as to every port.
  std::map<std::string, double> port_bw_Bps;

  std::vector<GpuSlot> gpus;  // every GPU, ordered by (node, local gpu); global GPU id = index
  int gpu_count() const { return static_cast<int>(gpus.size()); }
};

// Reads the scenario's `platform:` mapping (presets resolved, overrides applied, XML hosts scanned).
PlatformSpec read_platform(MapReader& reader, const std::string& source_dir);
GpuSpec gpu_preset(const std::string& key);  // throws std::out_of_range for an unknown key
std::vector<std::string> gpu_preset_names();
std::vector<std::string> cluster_preset_names();

// Resolves a path written in a file: absolute as given; relative, against `source_dir` (the folder of the file that
// names it; "." for a path given on the command line), else the installed data (models/, platforms/), never the
// working directory. Returns the absolute, normalised path, or "" when none is a regular file.
std::string resolve_input_path(const std::string& path, const std::string& source_dir);
// How errors name an input file: relative to the working directory when it lies below it (as the user would type
// it), else absolute. For messages only: what a file resolves to never depends on the working directory.
std::string display_path(const std::string& absolute_path);
// A file of the installed platform data (platforms/<name>): next to the executable, else the source tree.
std::string platform_data_file(const char* name);

}  // namespace cpsim
