// `cpsim volumes`: the per-rank per-layer CP communication of every attention mode for given parameters, without
// simulating: a table (bytes, share of dense ring, primitive) or JSON. Presets reproduce the seed's tables:
//   seed         the unified parameters of heterogeneous-attention-cp.md's quantitative table (S=128K, N=4,
//                d_c=512, d_model=7168, n_h=128, d_head=128, B=1, BF16; n_win 4096 and 128; m'=128; k 512 and 2048;
//                B_blk=512, k_block=8; MoBA's centroid width d_kv = 1024 as in its section);
//   mistral-swa  the SWA section's example (Mistral-7B, GQA d_kv=1024, S=128K, N=4, n_win 4096 and 128).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "workloads/attention/registry.hpp"

namespace cpsim {

struct VolumeTableRow {
  std::string label;  // e.g. "SWA (n_win=4096)"
  ModeVolume volume;
  double share_of_dense_ring = 0;               // cpsim bytes / cpsim dense ring
  std::optional<double> seed_share_of_dense_ring;  // the seed's value / the seed's dense ring
};

struct VolumeTable {
  std::string preset;
  CommParams params;
  std::vector<VolumeTableRow> rows;
  std::vector<std::string> notes;  // where the seed's numbers and its formulas disagree
};

// Throws InputError for an unknown preset.
VolumeTable volume_table(const std::string& preset, const CommParams& overrides_applied);
CommParams volume_preset_params(const std::string& preset);
std::string volume_table_text(const VolumeTable& t);
std::string volume_table_json(const VolumeTable& t);

}  // namespace cpsim
