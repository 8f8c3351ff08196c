#include "sim/sweep/sweep_spec.hpp"

#include <cctype>
#include <fmt/format.h>

namespace cpsim {
namespace {

bool valid_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// "parallel" and "parallel.cp" nest: setting both would make the point depend on the order of the --set flags.
bool nested(const std::string& a, const std::string& b) {
  return a == b || a.rfind(b + ".", 0) == 0 || b.rfind(a + ".", 0) == 0;
}

[[noreturn]] void axis_error(const std::string& key, const std::string& message) {
  throw InputError(fmt::format("--axis:1:1: {}: {}", key, message));
}

}  // namespace

namespace {

// One axis of the sweep block: `key: [v1, v2, ...]` (r: the mapping holding it).
SweepAxis read_axis(MapReader& r, const YAML::Node& key_node, const std::vector<SweepAxis>& axes, bool zipped) {
  const std::string key = key_name(key_node, r.source(), r.path());
  const YAML::Node list = r.node(key);  // marks the key as known
  if (!valid_key(key)) fail_at(key_node, r.source(), r.path_of(key), "expected a key path such as parallel.cp");
  if (key == "sweep" || key.rfind("sweep.", 0) == 0) r.fail(key, "the sweep block cannot sweep itself");
  for (const auto& other : axes)
    if (nested(key, other.key)) r.fail(key, fmt::format("overlaps with the axis '{}'", other.key));
  if (!list.IsSequence() || list.size() == 0) r.fail(key, "expected a non-empty list of values, e.g. [1, 2, 4]");
  const YAML::Mark mark = key_node.Mark();
  SweepAxis axis{key, {}, fmt::format("{}:{}:{}", r.source().file, mark.line + 1, mark.column + 1), zipped};
  for (const auto& item : list) {
    if (!item.IsScalar()) fail_at(item, r.source(), r.path_of(key), "each value must be a scalar");
    // Zipped axes may repeat a value (cp 1, 2, 4 against nodes 1, 1, 2): the positions are what must differ.
    if (!zipped)
      for (const auto& seen : axis.values)
        if (seen == item.Scalar()) fail_at(item, r.source(), r.path_of(key), fmt::format("'{}' appears twice", seen));
    axis.values.push_back(item.Scalar());
  }
  return axis;
}

}  // namespace

std::vector<SweepAxis> read_sweep_block(MapReader& top) {
  const YAML::Node block = top.self()["sweep"];
  if (!block.IsDefined()) return {};
  if (block.IsNull()) top.fail("sweep", "expected a mapping of key path -> list of values, got nothing");
  MapReader r = top.map("sweep");
  std::vector<SweepAxis> axes;
  for (const auto& kv : r.self()) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "zip") {
      if (!kv.second.IsMap() || kv.second.size() == 0)
        r.fail("zip", "expected a mapping of key path -> list of values that move together");
      MapReader z = r.map("zip");
      for (const auto& zkv : z.self()) axes.push_back(read_axis(z, zkv.first, axes, true));
      z.finish();
      continue;
    }
    axes.push_back(read_axis(r, kv.first, axes, false));
  }
  r.finish();
  for (const auto& a : axes)  // every zipped axis as long as the first
    if (a.zipped)
      for (const auto& b : axes)
        if (b.zipped && b.values.size() != a.values.size())
          throw InputError(fmt::format("{}: sweep.zip.{}: {} values, but '{}' in the same zip has {}", b.location,
                                       b.key, b.values.size(), a.key, a.values.size()));
  return axes;
}

SweepAxis parse_axis_arg(const std::string& text, bool zipped) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) axis_error(text, "expected key.path=v1,v2,...");
  SweepAxis axis{text.substr(0, eq), {}, zipped ? "--zip:1:1" : "--axis:1:1", zipped};
  if (!valid_key(axis.key)) axis_error(axis.key, "expected a key path such as parallel.cp");
  const std::string list = text.substr(eq + 1);
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    const std::string v = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) axis_error(axis.key, fmt::format("empty value in '{}'", list));
    if (!zipped)
      for (const auto& seen : axis.values)
        if (seen == v) axis_error(axis.key, fmt::format("'{}' appears twice", v));
    axis.values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

std::vector<SweepAxis> combine_axes(std::vector<SweepAxis> axes, const std::vector<SweepAxis>& cli) {
  const std::size_t from_block = axes.size();
  for (const auto& c : cli) {
    if (c.key == "sweep" || c.key.rfind("sweep.", 0) == 0) axis_error(c.key, "the sweep block cannot be swept");
    bool replaced = false;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].key == c.key && i < from_block) {
        axes[i].values = c.values;
        axes[i].zipped = c.zipped;
        axes[i].location = c.location;
        replaced = true;
      } else if (nested(axes[i].key, c.key)) {
        axis_error(c.key, axes[i].key == c.key ? "given twice"
                                               : fmt::format("overlaps with the axis '{}'", axes[i].key));
      }
    }
    if (!replaced) axes.push_back(c);
  }
  const SweepAxis* first_zipped = nullptr;
  for (const auto& a : axes)
    if (a.zipped) {
      if (!first_zipped) first_zipped = &a;
      if (a.values.size() != first_zipped->values.size())
        throw InputError(fmt::format("{}: {}: {} values, but '{}' in the same zip has {}", a.location, a.key,
                                     a.values.size(), first_zipped->key, first_zipped->values.size()));
    }
  return axes;
}

void check_overrides_against_axes(const std::vector<std::string>& overrides, const std::vector<SweepAxis>& axes) {
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError(fmt::format("--set:1:1: {}: expected key.path=value", o));
    const std::string key = o.substr(0, eq);
    if (key == "sweep" || key.rfind("sweep.", 0) == 0)
      throw InputError(fmt::format("--set:1:1: {}: change the sweep with --axis key=v1,v2,...", key));
    for (const auto& a : axes)
      if (nested(key, a.key))
        throw InputError(fmt::format("--set:1:1: {}: '{}' is swept; pin it with --axis {}=VALUE", key, a.key, a.key));
  }
}

namespace {

// The sweep's dimensions in order: each unzipped axis alone, the zipped axes together where the first one is.
std::vector<std::vector<std::size_t>> dimensions(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<std::size_t>> dims;
  std::size_t zip_dim = 0;
  bool zip_seen = false;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i].zipped) {
      dims.push_back({i});
    } else if (!zip_seen) {
      zip_seen = true;
      zip_dim = dims.size();
      dims.push_back({i});
    } else {
      dims[zip_dim].push_back(i);
    }
  }
  return dims;
}

}  // namespace

std::size_t point_count(const std::vector<SweepAxis>& axes) {
  std::size_t n = 1;
  for (const auto& dim : dimensions(axes)) n *= axes[dim.front()].values.size();
  return n;
}

std::vector<std::string> point_values(const std::vector<SweepAxis>& axes, std::size_t index) {
  std::vector<std::string> values(axes.size());
  const auto dims = dimensions(axes);
  for (std::size_t d = dims.size(); d-- > 0;) {
    const std::size_t size = axes[dims[d].front()].values.size(), position = index % size;
    for (std::size_t a : dims[d]) values[a] = axes[a].values[position];
    index /= size;
  }
  return values;
}

Shard parse_shard(const std::string& text) {
  if (text.empty()) return {};
  const auto slash = text.find('/');
  Shard s;
  try {
    std::size_t used_i = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    const std::string i = text.substr(0, slash), n = text.substr(slash + 1);
    s.index = std::stoul(i, &used_i);
    s.count = std::stoul(n, &used_n);
    if (used_i != i.size() || used_n != n.size() || i[0] == '-' || n[0] == '-') throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw InputError(fmt::format("--shard:1:1: {}: expected I/N, e.g. 0/4", text));
  }
  if (s.count == 0 || s.index >= s.count)
    throw InputError(fmt::format("--shard:1:1: {}: expected 0 <= I < N", text));
  return s;
}

}  // namespace cpsim
