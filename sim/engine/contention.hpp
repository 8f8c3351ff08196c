// How CP traffic shares GPUs and links with TP/EP traffic (cp-overview.md, "CP 与其他并行维度的并发带宽竞争"):
//   fair         SimGrid's max-min sharing of the physical links (the default).
//   exclusive    Megatron's rule: on a GPU, flows of different traffic classes never overlap; a flow waits until
//                no flow of another class touches its sender or receiver (FIFO by readiness). T = T_CP + T_TP.
//   staggered    Helix-style time decoupling, ideal: each class runs as if alone, on its own copy of the network
//                (T = max(T_CP, T_TP)). On XML platforms, which cannot be copied, a link carrying k classes gets k
//                times its capacity instead (exact when each class has one flow per link).
//   subtractive  Lagom-style: every comm kernel k (one per flow, NC channels, chunk size C) on a link consumes
//                V(NC, C) = NC * v * (1 + c0 / C) of it: B_available = B_peak - sum_k V(NC_k, C_k), and no more
//                than sum_k NC_k * b_channel (a kernel's channels bound its throughput). Its SMs are taken from
//                compute: while m flows touch its GPU, a kernel runs on SM - m * NC SMs, i.e. progresses at
//                (SM - m * NC) / SM of its roofline rate (re-timed whenever m changes).
// The modes are policies behind one interface (sim/engine/contention_policy.hpp) that the executor consults.
// docs/contention.md documents the parameters and their defaults.
#pragma once
#include <string>

#include "workloads/enum_names.hpp"

namespace cpsim {

enum class ContentionMode { FAIR, EXCLUSIVE, STAGGERED, SUBTRACTIVE };
constexpr EnumNames<ContentionMode, 4> kContentionModeNames{{{{ContentionMode::FAIR, "fair"},
                                                             {ContentionMode::EXCLUSIVE, "exclusive"},
                                                             {ContentionMode::STAGGERED, "staggered"},
                                                             {ContentionMode::SUBTRACTIVE, "subtractive"}}}};
const char* contention_mode_name(ContentionMode m);

struct ContentionSpec {
  ContentionMode mode = ContentionMode::FAIR;
  int channels = 16;                        // NC: channels (~SMs) per comm kernel
  double chunk_bytes = 1 << 20;             // C
  double channel_bw_Bps = 25e9;             // b_channel: one channel's throughput
  double interference_Bps = 0.5e9;          // v: bandwidth one channel consumes on a shared link
  double chunk_overhead_bytes = 64 << 10;   // c0: per-chunk protocol cost, in bytes of payload

  // V(NC, C) of one kernel.
  double consumed_Bps() const { return channels * interference_Bps * (1 + chunk_overhead_bytes / chunk_bytes); }
  // Capacity of a link of `peak_Bps` carrying `kernels` concurrent comm kernels (subtractive), at least 1% of peak.
  double subtractive_link_Bps(double peak_Bps, int kernels) const;
  // Factor on a compute kernel's duration when `kernels` comm kernels touch its GPU (subtractive).
  double compute_stretch(int sm_count, int kernels) const;
};

class MapReader;
// Reads a scenario's `contention:` block (mode, channels, chunk_bytes, channel_bw, interference_bw,
// chunk_overhead_bytes) with located errors.
ContentionSpec read_contention(MapReader& r);

}  // namespace cpsim
