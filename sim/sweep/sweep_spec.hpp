// What a sweep varies: axes (a scenario key path and the values it takes), read from the scenario's `sweep:` block
// and from `--axis key=v1,v2,...`, and the points of their cartesian product in a fixed order. Axes of the zip
// group (`sweep: {zip: {k1: [...], k2: [...]}}` or `--zip k=v1,v2`) move together: their i-th values form one
// position of a single dimension ("CP degree with one node per CP rank", (P, T) pairs).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {

struct SweepAxis {
  std::string key;                  // scenario key path, e.g. "parallel.cp"
  std::vector<std::string> values;  // as written, e.g. {"128K", "256K"}; applied to a point as --set key=value
  std::string location = "--axis:1:1";  // where it was written: file:line:col in the sweep block, or --axis
  bool zipped = false;  // moves with the other zipped axes (one dimension), instead of being its own dimension
};

// Reads the optional `sweep:` block of a scenario's top mapping (a mapping of key path -> non-empty list of distinct
// scalars), in file order; no block -> no axes. Errors are located InputErrors.
std::vector<SweepAxis> read_sweep_block(MapReader& top);

// Parses one `--axis key=v1,v2,...` (or, `zipped`, one `--zip key=v1,v2,...`).
SweepAxis parse_axis_arg(const std::string& text, bool zipped = false);

// The axes of a sweep: a CLI axis replaces the block axis with the same key (keeping its place) or is appended.
// Keys that nest (parallel and parallel.cp) are rejected, and so are zipped axes of different lengths.
std::vector<SweepAxis> combine_axes(std::vector<SweepAxis> block, const std::vector<SweepAxis>& cli);

// Rejects a --set that touches a swept key (an axis decides it) or the sweep block itself.
void check_overrides_against_axes(const std::vector<std::string>& overrides, const std::vector<SweepAxis>& axes);

// Number of points: the product of the dimensions' sizes (1 with no axes); the zip group is one dimension.
std::size_t point_count(const std::vector<SweepAxis>& axes);

// The values of point `index`, one per axis: the first dimension varies slowest, the last fastest (row-major
// order); the zip group sits where its first axis is.
std::vector<std::string> point_values(const std::vector<SweepAxis>& axes, std::size_t index);

// `--shard I/N`: this process runs the points with index % N == I.
struct Shard {
  std::size_t index = 0, count = 1;
  bool contains(std::size_t point) const { return point % count == index; }
};
Shard parse_shard(const std::string& text);  // "" -> 0/1

}  // namespace cpsim
