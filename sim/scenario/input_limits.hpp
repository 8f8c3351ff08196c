// The documented ranges of scenario numbers (docs/robustness.md, "Limits"). Every integer key, token count,
// quantity and real that a scenario, a model, a GPU or a calibration file gives is checked against these when it is
// read, so no count wraps, no derived byte total overflows and no non-finite value reaches the engine.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cpsim::limits {

// Integer keys (degrees, layers, dimensions, heads, batch, micro-batches, nodes): they are stored as int.
constexpr std::int64_t kMaxInteger = 2147483647;  // 2^31 - 1
// GPUs of a platform: the engine builds one route per pair that talks and the summary one row per GPU; 65,536 is
// far past the largest CP plans and keeps a platform build within memory (see also the task limit of `run`).
constexpr std::int64_t kMaxGpus = 65536;
// Token counts (run.seq_len, context_len, cached_tokens): 2^31 = 2G tokens, three orders of magnitude above the
// longest published contexts; with d_model, layers and GPUs in range, byte totals stay below 2^63.
constexpr std::uint64_t kMaxTokens = 2147483648ull;
// Quantities with units. Upper bounds far above any machine, low enough that products of them stay finite.
constexpr double kMaxBandwidth_Bps = 1e15;  // 1 PB/s per link
constexpr double kMaxTime_s = 1e6;          // ~11.6 days of latency or overhead
constexpr double kMaxSize_bytes = 1e18;     // 1 EB of memory
constexpr double kMaxFlops = 1e21;          // 1 ZFLOP/s per GPU
// Input files (scenario, model, presets, calibration): a scenario is a few KiB; 16 MiB leaves room for generated ones.
constexpr std::size_t kMaxInputFile_bytes = 16u << 20;
// SimGrid XML platforms: one explicit route per GPU pair, about 150 bytes each, so 1 GiB is ~2,600 GPUs in one
// Full zone; larger platforms are generated from presets, not written out.
constexpr std::size_t kMaxPlatformFile_bytes = std::size_t(1) << 30;
// Plain reals (fractions, factors): finite, and at most this in magnitude unless a key says less.
constexpr double kMaxReal = 1e12;

}  // namespace cpsim::limits
