// Traffic classes: which parallel dimension a flow serves (reported per class; contention modes act on them).
#pragma once
#include <cstdint>

#include "workloads/enum_names.hpp"

namespace cpsim {

enum class Traffic : std::uint8_t { NONE, CP, TP, EP, DP, PP };
constexpr int kTrafficClasses = 6;
constexpr EnumNames<Traffic, 6> kTrafficNames{{{{Traffic::NONE, "none"},
                                               {Traffic::CP, "cp"},
                                               {Traffic::TP, "tp"},
                                               {Traffic::EP, "ep"},
                                               {Traffic::DP, "dp"},
                                               {Traffic::PP, "pp"}}}};
inline const char* traffic_name(Traffic t) { return kTrafficNames.name(t); }

}  // namespace cpsim
