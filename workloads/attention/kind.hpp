// What a layer's attention is (the kind) and how CP splits it (the algorithm), as values. Names exist only in the
// tables below and in the registry (workloads/attention/registry.hpp): the loader converts input strings once.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/enum_names.hpp"

namespace cpsim {

// The built-in kinds; a registered kind (register_attention_kind) takes the next free value. Names, defaults and
// lowerings come from the registry.
enum class AttentionKind : std::uint8_t { DENSE, SWA, CSA, HCA, DSA, MOBA, LINEAR, SSM };
constexpr bool is_builtin(AttentionKind k) { return k <= AttentionKind::SSM; }

// One layer's kinds: one, or several computed side by side ("swa+csa" in DeepSeek-V4).
using LayerKinds = std::vector<AttentionKind>;

enum class CpAlgorithm : std::uint8_t {
  RING,           // pass-KV ring
  ALLGATHER,      // AllGather of (compressed) KV, or of linear states
  ULYSSES,        // all-to-all over heads
  USP,            // Ulysses inside groups, ring across
  PASS_Q,         // Q around the ring, partial outputs back
  TREE,           // decode: tree all-reduce of the softmax partials
  AUTO,           // dense: pass-KV or pass-Q, resolved per run
  BOUNDARY,       // SWA: the left neighbour's window
  LOCAL,          // no CP communication
  SELECT_GATHER,  // top-k selection first, then a sparse gather
  GATHER,         // MoBA: centroid AllGather + block gather
  LASP1,          // linear: serial state chain
  LASP2,          // linear: AllGather of states
  LASP2H,         // linear in a hybrid: LASP-2 for the linear layers, AllGather-KV for the softmax ones
};
constexpr EnumNames<CpAlgorithm, 14> kCpAlgorithmNames{{{
    {CpAlgorithm::RING, "ring"},
    {CpAlgorithm::ALLGATHER, "allgather"},
    {CpAlgorithm::ULYSSES, "ulysses"},
    {CpAlgorithm::USP, "usp"},
    {CpAlgorithm::PASS_Q, "pass-q"},
    {CpAlgorithm::TREE, "tree"},
    {CpAlgorithm::AUTO, "auto"},
    {CpAlgorithm::BOUNDARY, "boundary"},
    {CpAlgorithm::LOCAL, "local"},
    {CpAlgorithm::SELECT_GATHER, "select-gather"},
    {CpAlgorithm::GATHER, "gather"},
    {CpAlgorithm::LASP1, "lasp1"},
    {CpAlgorithm::LASP2, "lasp2"},
    {CpAlgorithm::LASP2H, "lasp2h"},
}}};
inline const char* algorithm_name(CpAlgorithm a) { return kCpAlgorithmNames.name(a); }

// A kind's name ("dense") and a layer's joined name ("swa+csa"), from the registry.
const char* kind_name(AttentionKind k);
std::optional<AttentionKind> parse_kind(std::string_view name);
std::string layer_kinds_name(const LayerKinds& kinds);
std::vector<std::string> pattern_names(const std::vector<LayerKinds>& pattern);  // each layer's joined name
// "swa+csa" -> {SWA, CSA}; nullopt naming the first unknown part in `unknown`.
std::optional<LayerKinds> parse_layer_kinds(std::string_view joined, std::string* unknown = nullptr);

}  // namespace cpsim
