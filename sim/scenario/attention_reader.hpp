// Reading the heterogeneous-attention parts of a scenario: the model's `attention:` block (layer pattern and the
// parameters of compressed, sparse and block-sparse kinds) and the per-kind CP algorithms under `cp:`.
#pragma once
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/model.hpp"

namespace cpsim {

AttentionSpec read_attention(MapReader& r);
// Reads each registered kind's cp.<kind> block when present: its algorithm and the kind's own keys.
void read_kind_cp_plans(MapReader& cp, CpPlan& plan);
// Rules that tie the layer pattern to the model, the run and the plan, reported at `model.attention.pattern`
// or at the key to change.
void check_attention_plan(const ModelSpec& m, const RunSpec& run, const ParallelSpec& par, const CpPlan& plan,
                          MapReader& top, const YamlSource& model_source);

}  // namespace cpsim
