#include "sim/cli/cmd_volumes.hpp"

#include <fmt/format.h>
#include <iostream>

#include "sim/scenario/units.hpp"
#include "sim/report/volume_table.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace {

// Applies `--name value` options onto the preset's parameters; a bad value is a one-line error naming the option.
void apply(const std::map<std::string, std::string>& values, CommParams& p) {
  const std::map<std::string, double*> fields = {
      {"cp", &p.N},          {"batch", &p.B},           {"dtype-bytes", &p.s},        {"kv-width", &p.kv_width},
      {"gate-width", &p.gate_width}, {"d-model", &p.d_model}, {"heads", &p.linear_heads},
      {"head-dim", &p.linear_head_dim}, {"n-win", &p.n_win}, {"csa-ratio", &p.csa_ratio},
      {"hca-ratio", &p.hca_ratio}, {"csa-top-k", &p.csa_top_k}, {"dsa-top-k", &p.dsa_top_k},
      {"moba-block", &p.moba_block}, {"moba-k", &p.moba_top_k_blocks}};
  for (const auto& [name, text] : values) {
    const auto n = parse_count(text);
    const bool tokens = name == "seq-len";
    if (!n || *n == 0)
      throw InputError(fmt::format("--{0}:1:1: {0}: expected {1}, got '{2}'", name,
                                   tokens ? "a count such as 128K" : "a positive integer", text));
    const std::uint64_t max = tokens ? limits::kMaxTokens : std::uint64_t(limits::kMaxInteger);
    if (*n > max) throw InputError(fmt::format("--{0}:1:1: {0}: must be at most {1}, got '{2}'", name, max, text));
    (tokens ? p.S : *fields.at(name)) = static_cast<double>(*n);
  }
}

// Every row's bytes are written as integers: a product of large options must not pass 2^62.
void check_sizes(const VolumeTable& t) {
  for (const auto& row : t.rows)
    for (const double b : {row.volume.bytes, row.volume.seed_bytes.value_or(0.0)})
      if (!(b < 4.6e18))
        throw InputError(fmt::format("--seq-len:1:1: seq-len: {}: {:.3g} bytes per rank would pass 2^62; reduce the "
                                     "sequence or the widths",
                                     row.label, b));
}

}  // namespace

int volumes_command(const VolumesArgs& args) {
  try {
    CommParams p = volume_preset_params(args.preset);
    apply(args.values, p);
    const VolumeTable t = volume_table(args.preset, p);
    check_sizes(t);
    std::cout << (args.json ? volume_table_json(t) : volume_table_text(t));
    return 0;
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

}  // namespace cpsim
