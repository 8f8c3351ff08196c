// Parsing of quantities written by people: token counts (128K), bandwidths (450GBps), times (1us), sizes (80GiB).
// Each parser returns std::nullopt when the text is not a valid quantity; callers turn that into a located error.
// Units are SimGrid's (xbt/parse_units.hpp: decimal k, binary Ki) plus cpsim's capital K for decimal kilo, so a
// value means the same in a scenario and in an XML platform; cpsim_core may not link SimGrid, so the parser is
// cpsim's own and tests/units_test.cpp checks it against SimGrid's, value for value. Unlike SimGrid, a bandwidth or
// a time needs its unit and nothing may be negative.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace cpsim {

// Token counts use binary multipliers, as the literature does: 128K = 131072, 1M = 1048576.
std::optional<std::uint64_t> parse_count(const std::string& text);
// Bandwidth in bytes/s: B/kB/MB/GB/TB (decimal) or KiB/MiB/GiB/TiB (binary) + "ps"; or bits: kbps/Mbps/Gbps/Tbps.
std::optional<double> parse_bandwidth_Bps(const std::string& text);
// Time in seconds: s, ms, us, ns.
std::optional<double> parse_time_s(const std::string& text);
// Seconds as a plain number (a key or column named *_s) or a time with its unit: "2", "0.5", "50ms".
std::optional<double> parse_seconds(const std::string& text);
// Size in bytes: B, kB, MB, GB, TB (decimal), KiB, MiB, GiB, TiB (binary).
std::optional<double> parse_size_bytes(const std::string& text);
// Flop rate: f, kf, Mf, Gf, Tf, Pf (flop/s), as SimGrid writes host speeds.
std::optional<double> parse_flops(const std::string& text);

// Human-readable renderings used in logs and tables.
std::string format_bytes(double bytes);   // 16.00 MiB
std::string format_time(double t_s);      // 12.345 ms

}  // namespace cpsim
