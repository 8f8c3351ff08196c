// The network half of a calibration (platforms/calibration.yaml, docs/calibration.md): how NCCL-style collectives
// and point-to-point messages cost on a cluster. Pure data; the collective lowering (workloads/nccl_collectives.*)
// turns it into flows, and the platform builders scale link capacities by the achievable fractions.
#pragma once
#include <array>
#include <string>
#include <vector>

namespace cpsim {

enum class Protocol : int { LL = 0, LL128 = 1, SIMPLE = 2 };
constexpr int kProtocols = 3;
const char* protocol_name(Protocol p);  // "LL", "LL128", "Simple"

enum class CollectiveAlgorithm : int { RING = 0, TREE = 1, NVLS = 2, HIERARCHICAL = 3 };
constexpr int kCalibratedAlgorithms = 3;  // ring, tree, nvls have latency rows; hierarchical composes ring phases
const char* collective_algorithm_name(CollectiveAlgorithm a);  // "ring", "tree", "nvls", "hierarchical"

// NCCL's latency model of one algorithm (tuning.cc): a base latency per call plus a hardware latency per step,
// by protocol.
struct AlgorithmLatency {
  std::array<double, kProtocols> base_s{};
  std::array<double, kProtocols> nvlink_step_s{};
  std::array<double, kProtocols> net_step_s{};
};

struct NetworkCalibration {
  std::string name = "ideal";
  int version = 0;
  double nvlink_bw_efficiency = 1;  // achievable / nominal link rate (protocol overhead, measured busbw)
  double nic_bw_efficiency = 1;
  int max_channels = 1;             // rings (or trees) one collective runs side by side
  bool nvls = false;                // NVSwitch reduces in the switch (all-reduce inside one node)
  double nvls_bw_efficiency = 1;    // NVLS all-reduce: algbw / nominal port rate
  double p2p_nvlink_latency_s = 0;  // one point-to-point message, end to end (CP ring hops, pass-Q)
  double p2p_net_latency_s = 0;
  double alltoall_nvlink_latency_s = 0;  // one all-to-all call, per message (NCCL grouped send/recv)
  double alltoall_net_latency_s = 0;
  std::array<AlgorithmLatency, kCalibratedAlgorithms> algorithms{};
  std::array<double, kProtocols> protocol_bw_factor{1, 1, 1};
  bool ideal() const { return name == "ideal"; }
};

// Loads calibration `name` from platforms/calibration.yaml (following `inherit:`); throws InputError located at
// `where` (the scenario's calibration key) when unknown. `ideal` returns the default-constructed table.
class MapReader;
NetworkCalibration read_network_calibration(const std::string& name, MapReader& where, const std::string& key);
std::vector<std::string> network_calibration_names();

}  // namespace cpsim
