#include "sim/report/volume_table.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace {

struct ModeSpec {
  std::string label;
  AttentionKind kind;
  CpAlgorithm algorithm;
  double n_win = 0, top_k = 0;  // per-row variants; 0 = keep the params'
};

// The rows of the seed's tables, in its order.
std::vector<ModeSpec> modes_of(const std::string& preset) {
  using K = AttentionKind;
  using A = CpAlgorithm;
  if (preset == "mistral-swa")
    return {{"Dense ring", K::DENSE, A::RING},
            {"SWA (n_win=4096)", K::SWA, A::BOUNDARY, 4096},
            {"SWA (n_win=128, V4)", K::SWA, A::BOUNDARY, 128}};
  return {{"Dense ring", K::DENSE, A::RING},
          {"AllGather-CP (DSA, transfer then select)", K::DSA, A::ALLGATHER},
          {"SWA (n_win=4096)", K::SWA, A::BOUNDARY, 4096},
          {"SWA (n_win=128, V4)", K::SWA, A::BOUNDARY, 128},
          {"HCA(C128) compressed dense, AllGather", K::HCA, A::ALLGATHER},
          {"CSA(C4) sparse, select then gather (k=512)", K::CSA, A::SELECT_GATHER, 0, 512},
          {"DSA sparse, select then gather (k=2048)", K::DSA, A::SELECT_GATHER, 0, 2048},
          {"MoBA block sparse (B_blk=512, k_block=8)", K::MOBA, A::GATHER},
          {"Linear attention state (LASP-2, H=n_h)", K::LINEAR, A::LASP2},
          {"HCA(C128) local dense (V4)", K::HCA, A::LOCAL},
          {"CSA(C4) AllGather of compressed KV", K::CSA, A::ALLGATHER},
          {"SWA under round-robin partition", K::SWA, A::ALLGATHER, 4096},
          {"Dense AllGather-KV (LASP-2H softmax layers)", K::DENSE, A::ALLGATHER},
          {"Linear attention state (LASP-1 chain)", K::LINEAR, A::LASP1}};
}

double exact(double bytes) { return std::round(bytes); }

}  // namespace

CommParams volume_preset_params(const std::string& preset) {
  CommParams p;
  p.S = 131072;
  p.N = 4;
  p.B = 1;
  p.s = 2;
  if (preset == "seed") {
    p.kv_width = 512;  // MLA d_c: c_kv = 2 * d_c * s = 2 KiB per token
    p.gate_width = 1024;
    p.d_model = 7168;
    p.linear_heads = 128;
    p.linear_head_dim = 128;
    p.n_win = 4096;
    p.csa_top_k = 512;
    p.dsa_top_k = 2048;
  } else if (preset == "mistral-swa") {
    p.kv_width = 1024;  // GQA: 8 KV heads x 128
    p.gate_width = 1024;
    p.d_model = 4096;
    p.linear_heads = 32;
    p.linear_head_dim = 128;
    p.n_win = 4096;
  } else {
    throw InputError(fmt::format("--preset:1:1: preset: '{}' is not one of: seed, mistral-swa", preset));
  }
  return p;
}

VolumeTable volume_table(const std::string& preset, const CommParams& params) {
  VolumeTable t{preset, params, {}, {}};
  const ModeVolume ring = *mode_volume(params, AttentionKind::DENSE, CpAlgorithm::RING);
  for (const ModeSpec& m : modes_of(preset)) {
    CommParams p = params;
    if (m.n_win > 0) p.n_win = m.n_win;
    if (m.top_k > 0) (m.kind == AttentionKind::CSA ? p.csa_top_k : p.dsa_top_k) = m.top_k;
    const auto v = mode_volume(p, m.kind, m.algorithm);
    if (!v) continue;
    VolumeTableRow row{m.label, *v, v->bytes / ring.bytes, std::nullopt};
    if (v->seed_bytes && ring.seed_bytes) row.seed_share_of_dense_ring = *v->seed_bytes / *ring.seed_bytes;
    t.rows.push_back(row);
  }
  // Kinds registered beyond the built-ins (extensions, docs/extending.md): one row per mode with a closed form.
  for (const auto& kind : attention_kinds()) {
    if (is_builtin(kind.kind)) continue;
    for (const auto& mode : kind.modes) {
      const auto v = mode_volume(params, kind.kind, mode.algorithm);
      if (!v) continue;
      VolumeTableRow row{fmt::format("{} ({})", kind.description, algorithm_name(mode.algorithm)), *v,
                         v->bytes / ring.bytes, std::nullopt};
      if (v->seed_bytes && ring.seed_bytes) row.seed_share_of_dense_ring = *v->seed_bytes / *ring.seed_bytes;
      t.rows.push_back(row);
    }
  }
  if (preset == "mistral-swa")
    t.notes.push_back(fmt::format(
        "The seed's SWA table lists 2.0 GB for the dense ring, but its own formula S*2*d_kv*s gives {} ({} with "
        "(N-1)/N); cpsim follows the formula, so the SWA shares are 3.1% and 0.1% rather than 0.8% and 0.025%.",
        format_bytes(params.B * params.S * params.c_kv()), format_bytes(ring.bytes)));
  if (preset == "seed")
    t.notes.push_back(
        "Seed columns evaluate the seed's own formulas (its summary table); cpsim columns are the bytes cpsim's "
        "lowerings move from other ranks. They differ where the seed counts a rank's own share (dense ring S*c_kv, "
        "select-then-gather k*c_kv, MoBA k_block*B_blk*c_kv), leaves out the top-k merge, or treats LASP-2's "
        "gathered states as one tensor split N ways (see each row's note).");
  return t;
}

std::string volume_table_text(const VolumeTable& t) {
  std::string out = fmt::format("per-rank, per-layer CP communication, preset {}: S={}, N={}, B={}, s={}, c_kv={} B/token\n\n",
                                t.preset, t.params.S, t.params.N, t.params.B, t.params.s, t.params.c_kv());
  out += fmt::format("{:<46} {:>12} {:>8} {:>12} {:>8}  {}\n", "mode", "cpsim", "share", "seed", "share",
                     "primitive");
  for (const auto& r : t.rows) {
    const std::string seed = r.volume.seed_bytes ? format_bytes(*r.volume.seed_bytes) : "-";
    const std::string seed_share = r.seed_share_of_dense_ring ? fmt::format("{:.1f}%", 100 * *r.seed_share_of_dense_ring) : "-";
    out += fmt::format("{:<46} {:>12} {:>7.1f}% {:>12} {:>8}  {}\n", r.label, format_bytes(r.volume.bytes),
                       100 * r.share_of_dense_ring, seed, seed_share, r.volume.primitive);
  }
  out += "\nformulas (cpsim | seed) and notes:\n";
  for (const auto& r : t.rows) {
    out += fmt::format("  {}: {}", r.label, r.volume.formula);
    if (!r.volume.seed_formula.empty()) out += fmt::format("  | seed: {}", r.volume.seed_formula);
    if (!r.volume.note.empty()) out += fmt::format("  ({})", r.volume.note);
    out += "\n";
  }
  for (const auto& n : t.notes) out += "note: " + n + "\n";
  return out;
}

std::string volume_table_json(const VolumeTable& t) {
  using nlohmann::ordered_json;
  const CommParams& p = t.params;
  ordered_json j = {{"preset", t.preset},
                    {"params", {{"S", p.S}, {"N", p.N}, {"B", p.B}, {"dtype_bytes", p.s}, {"kv_width", p.kv_width},
                                {"c_kv_bytes", p.c_kv()}, {"gate_width", p.gate_width}, {"d_model", p.d_model},
                                {"linear_heads", p.linear_heads}, {"linear_head_dim", p.linear_head_dim},
                                {"hca_ratio", p.hca_ratio}, {"csa_ratio", p.csa_ratio}, {"moba_block", p.moba_block},
                                {"moba_top_k_blocks", p.moba_top_k_blocks}}},
                    {"rows", ordered_json::array()},
                    {"notes", t.notes}};
  for (const auto& r : t.rows) {
    ordered_json row = {{"mode", r.label},
                        {"kind", kind_name(r.volume.kind)},
                        {"algorithm", algorithm_name(r.volume.algorithm)},
                        {"primitive", r.volume.primitive},
                        {"bytes", static_cast<std::int64_t>(exact(r.volume.bytes))},
                        {"share_of_dense_ring", r.share_of_dense_ring},
                        {"formula", r.volume.formula}};
    row["seed_bytes"] = r.volume.seed_bytes ? ordered_json(static_cast<std::int64_t>(exact(*r.volume.seed_bytes)))
                                            : ordered_json(nullptr);
    row["seed_share_of_dense_ring"] =
        r.seed_share_of_dense_ring ? ordered_json(*r.seed_share_of_dense_ring) : ordered_json(nullptr);
    row["seed_formula"] = r.volume.seed_formula;
    row["note"] = r.volume.note;
    if (r.volume.exact) row["exact"] = *r.volume.exact;
    j["rows"].push_back(row);
  }
  return j.dump(2) + "\n";
}

}  // namespace cpsim
