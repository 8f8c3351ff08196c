// The attention modes cpsim knows, one registered value per kind (docs/extending.md). A kind brings its name, its
// CP algorithms with their lowering per phase and closed-form bytes, its default algorithm, the reader of its
// `cp.<kind>` block with located checks, its KV-cache rule and its summary fields. Scenario validation, `volumes`,
// the summary, the plan search and the docs tables are derived from this list.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/attention/closed_form.hpp"
#include "workloads/attention/decode_lowering.hpp"
#include "workloads/attention/kind.hpp"
#include "workloads/attention/lowering.hpp"

namespace cpsim {

class MapReader;  // sim/scenario/yaml_reader.hpp

// Closed-form bytes one rank receives per layer (nullopt: the mode has none for these parameters).
using ClosedForm = std::optional<ModeVolume> (*)(const CommParams& p, const MobaCpPlan& selection);

struct AttentionModeDef {
  CpAlgorithm algorithm;
  AttentionLowering forward = nullptr;   // prefill, and the forward pass of training (nullptr: decode only)
  AttentionLowering backward = nullptr;  // training's backward pass; nullptr: not modelled in training
  ClosedForm volume = nullptr;           // forward bytes; nullptr: no closed form
  ClosedForm backward_volume = nullptr;  // training backward bytes
  DecodeLowering decode = nullptr;       // one decode step's attention (nullptr: no decode under this mode)
  DecodeHome decode_home = DecodeHome::TAIL_RANK;  // where the decode token's hidden state lives
  ClosedForm decode_volume = nullptr;    // bytes per decode step (nullptr: `volume` holds the decode form)
  // CP receive buffers a rank holds while the layer runs (nullptr: the default rule of workloads/memory.hpp).
  double (*staging)(const CommParams& p, bool training) = nullptr;
  bool prefill() const { return forward != nullptr; }
};

// What a kind's checks see, with the two places a failure is reported.
struct KindCheck {
  const ModelSpec& model;
  const RunSpec& run;
  const ParallelSpec& parallel;
  const CpPlan& plan;
  std::function<void(const std::string& message)> fail_pattern;                  // at model.attention.pattern
  std::function<void(const std::string& key, const std::string& message)> fail_plan;  // at cp.<kind>.<key>
};

// cp.csa / cp.dsa `exact` (true: select-then-gather runs the exact distributed top-k; only with select-gather), and
// the summary's `exact` field of such a kind (false only for approximate select-then-gather).
void read_selection_plan(MapReader& block, CpPlan& plan, AttentionKind kind);
std::vector<std::pair<std::string, std::string>> selection_summary_fields(const CpPlan& plan, AttentionKind kind);

// Fails at the pattern unless each rank's tokens S/cp are a multiple of `unit` (the parameter named `what`).
void require_local_multiple(const KindCheck& c, AttentionKind kind, int unit, const char* what);

// What a kind's KV-cache rule sees: one GPU's tokens and the bytes one token's cache entry takes.
struct KvCacheInputs {
  const WorkloadInputs& in;
  const ShardShape& shape;
  CpAlgorithm algorithm;
  double local_tokens = 0;     // tokens per GPU (its CP share, whole batch)
  double per_token_bytes = 0;  // K + V (GQA), or the MLA latent + RoPE key (or the seed's c_kv)
};

struct AttentionKindDef {
  std::string name;
  std::string description;
  CpAlgorithm default_algorithm;
  std::vector<AttentionModeDef> modes;            // in the order choices are listed
  std::vector<CpAlgorithm> resolved_algorithms;   // accepted names resolved per run (dense: auto)
  // cp.<kind>: the keys beyond `algorithm`, read into the plan (nullptr: none).
  void (*read_plan)(MapReader& block, CpPlan& plan) = nullptr;
  // Cross-field checks of the model, run and plan this kind needs (nullptr: none).
  void (*check)(const KindCheck& c) = nullptr;
  // KV cache one GPU keeps for one layer (nullptr: its local tokens' entries).
  double (*kv_cache_bytes)(const KvCacheInputs& kv) = nullptr;
  // How the kind's CP lowering deals a sequence's tokens to the ranks (nullptr: contiguous). Consecutive layers
  // whose kinds deal them differently pay a re-layout all-to-all of the hidden states (workloads/relayout.hpp).
  Partition (*token_layout)(const CpPlan& plan) = nullptr;
  // summary.json `scenario.cp_plan.<kind>` fields beyond `algorithm`.
  std::vector<std::pair<std::string, std::string>> (*summary_fields)(const CpPlan& plan) = nullptr;
  // Filled in by the registry.
  AttentionKind kind{};

  const AttentionModeDef* mode(CpAlgorithm a) const;
  std::vector<std::string> algorithm_names() const;  // modes, then resolved_algorithms
};

// Every registered kind, built-in first, in registration order.
const std::vector<AttentionKindDef>& attention_kinds();
const AttentionKindDef& attention_kind(AttentionKind kind);
// A new kind (tests, extensions): its value is the next free one. Call before loading scenarios.
AttentionKind register_attention_kind(AttentionKindDef def);

// The chosen mode of `kind` (nullptr: the kind has no such algorithm).
const AttentionModeDef* find_mode(AttentionKind kind, CpAlgorithm algorithm);

// The token layout of `kind` under `plan` (AttentionKindDef::token_layout).
Partition token_layout(AttentionKind kind, const CpPlan& plan);

// Closed form of (kind, algorithm) for `p` (nullopt: none).
std::optional<ModeVolume> mode_volume(const CommParams& p, AttentionKind kind, CpAlgorithm algorithm,
                                      const MobaCpPlan& selection = {}, bool backward = false);
// Every (kind, algorithm) with a closed form, in registration order.
std::vector<std::pair<AttentionKind, CpAlgorithm>> volume_modes();

// Built-in kinds, one per folder (workloads/attention/<kind>/<kind>.cpp).
AttentionKindDef dense_attention_kind();
AttentionKindDef swa_attention_kind();
AttentionKindDef csa_attention_kind();
AttentionKindDef hca_attention_kind();
AttentionKindDef dsa_attention_kind();
AttentionKindDef moba_attention_kind();
AttentionKindDef linear_attention_kind();
AttentionKindDef ssm_attention_kind();

}  // namespace cpsim
