#include "sim/engine/contention.hpp"

#include <algorithm>

#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {

const char* contention_mode_name(ContentionMode m) { return kContentionModeNames.name(m); }

double ContentionSpec::subtractive_link_Bps(double peak_Bps, int kernels) const {
  if (kernels <= 0) return peak_Bps;
  const double available = std::min(peak_Bps - kernels * consumed_Bps(), kernels * channels * channel_bw_Bps);
  return std::max(available, 0.01 * peak_Bps);
}

double ContentionSpec::compute_stretch(int sm_count, int kernels) const {
  const int taken = std::min(kernels * channels, sm_count - 1);  // at least one SM is left to compute
  return double(sm_count) / (sm_count - taken);
}

ContentionSpec read_contention(MapReader& r) {
  ContentionSpec c;
  c.mode = r.choice_or("mode", kContentionModeNames, ContentionMode::FAIR);
  c.channels = static_cast<int>(r.integer_or("channels", c.channels, 1));
  c.chunk_bytes = r.size_bytes_or("chunk_bytes", c.chunk_bytes);
  c.channel_bw_Bps = r.bandwidth_Bps_opt("channel_bw").value_or(c.channel_bw_Bps);
  c.interference_Bps = r.bandwidth_Bps_opt("interference_bw").value_or(c.interference_Bps);
  c.chunk_overhead_bytes = r.size_bytes_or("chunk_overhead_bytes", c.chunk_overhead_bytes);
  if (c.chunk_bytes <= 0) r.fail("chunk_bytes", "must be positive");
  r.finish();
  return c;
}

}  // namespace cpsim
