// The attention kinds a layer can have and each kind's default CP algorithm (docs/heterogeneous-attention.md).
#include <stdexcept>

#include "workloads/model.hpp"

namespace cpsim {

const std::vector<std::string>& attention_kinds() {
  static const std::vector<std::string> kinds = {"dense", "swa", "csa", "hca", "dsa", "moba", "linear"};
  return kinds;
}

std::vector<std::string> split_layer_kind(const std::string& kind) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t plus; (plus = kind.find('+', start)) != std::string::npos; start = plus + 1)
    parts.push_back(kind.substr(start, plus - start));
  parts.push_back(kind.substr(start));
  return parts;
}

const std::string& default_cp_algorithm(const std::string& kind) {
  // The seed's production choice for each kind: SWA boundary P2P, CSA/DSA AllGather (transfer then select),
  // HCA local dense (V4 skips the AllGather), MoBA centroid AllGather + block gather, LASP-2 for linear layers.
  static const std::map<std::string, std::string> defaults = {
      {"dense", "ring"}, {"swa", "boundary"}, {"csa", "allgather"}, {"hca", "local"},
      {"dsa", "allgather"}, {"moba", "gather"}, {"linear", "lasp2"}};
  const auto it = defaults.find(kind);
  if (it == defaults.end()) throw std::logic_error("no default CP algorithm for attention kind " + kind);
  return it->second;
}

const std::string& CpPlan::algorithm(const std::string& kind) const {
  if (kind == "dense") return dense.algorithm;
  const auto it = algorithms.find(kind);
  return it != algorithms.end() ? it->second : default_cp_algorithm(kind);
}

}  // namespace cpsim
