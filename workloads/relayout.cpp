#include "workloads/relayout.hpp"

#include <algorithm>

#include "workloads/attention/partition.hpp"
#include "workloads/attention/registry.hpp"

namespace cpsim {

Partition layer_token_layout(const WorkloadInputs& in, int index) {
  return token_layout(in.model.layer_kind(index).front(), in.cp);
}

std::optional<Partition> relayout_from(const WorkloadInputs& in, int index) {
  if (index == 0 || in.parallel.cp == 1) return std::nullopt;
  const Partition before = layer_token_layout(in, index - 1), now = layer_token_layout(in, index);
  return before == now ? std::nullopt : std::optional(before);
}

std::vector<std::vector<double>> relayout_bytes(const WorkloadInputs& in, Partition from, Partition to) {
  const int n = in.parallel.cp;
  const bool sp = in.parallel.sequence_parallel && in.parallel.tp > 1;
  const double token_bytes = double(in.model.d_model) * dtype_bytes(in.run.dtypes.activations) / (sp ? in.parallel.tp : 1);
  std::vector<std::vector<double>> bytes(n, std::vector<double>(n, 0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) bytes[i][j] = in.run.batch * shared_tokens(from, i, to, j, in.run.seq_len, n) * token_bytes;
  return bytes;
}

double relayout_max_received_bytes(const WorkloadInputs& in, Partition from, Partition to) {
  const auto bytes = relayout_bytes(in, from, to);
  double most = 0;
  for (std::size_t j = 0; j < bytes.size(); ++j) {
    double received = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) received += bytes[i][j];
    most = std::max(most, received);
  }
  return most;
}

}  // namespace cpsim
