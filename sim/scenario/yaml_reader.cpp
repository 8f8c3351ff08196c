#include "sim/scenario/yaml_reader.hpp"

#include <cmath>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "sim/scenario/units.hpp"

namespace cpsim {
namespace {

bool is_overridden(const YamlSource& source, const std::string& path) {
  for (const auto& p : source.overridden_paths)
    if (path == p || path.rfind(p + ".", 0) == 0) return true;
  return false;
}

// An error quotes at most this much of a value: never a whole file (`--set model=/etc/passwd`).
std::string quoted(const std::string& text) {
  constexpr std::size_t kMax = 60;
  return text.size() <= kMax ? "'" + text + "'" : "'" + text.substr(0, kMax) + "...'";
}

std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Null: return "empty";
    default: return quoted(n.Scalar());
  }
}

// The byte offset's line and column (1-based).
std::pair<int, int> position_of(const std::string& text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return {line, col};
}

// The line (1-based) where a second YAML document starts ("---" after content, or content after "..."), or 0.
int second_document_line(const std::string& text) {
  bool content = false, ended = false;
  int line = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string l = text.substr(start, end - start);
    ++line;
    start = end + 1;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (first == std::string::npos || l[first] == '#' || (first == 0 && l[0] == '%')) continue;
    const bool marker = l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (l.rfind("...", 0) == 0 && l.find_first_not_of(".\r \t") == std::string::npos) {
      ended = true;
      continue;
    }
    if ((marker && content) || ended) return line;
    if (!marker || l.find_first_not_of(" \t\r", 3) != std::string::npos) content = true;
  }
  return 0;
}

// The first byte that is not valid UTF-8 text (or is NUL), or npos.
std::size_t first_bad_byte(const std::string& t) {
  for (std::size_t i = 0; i < t.size();) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (c == 0) return i;
    const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
    if (extra < 0 || (extra > 0 && i + extra >= t.size())) return i;  // not a lead byte, or cut short
    for (int k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(t[i + k]) >> 6) != 0x2) return i;
    i += extra + 1;
  }
  return std::string::npos;
}

std::string escape_control_characters(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

}  // namespace

InputError::InputError(const std::string& message, InputErrorReason reason_, std::string key_path_)
    : std::runtime_error(escape_control_characters(message)), reason(reason_), key_path(std::move(key_path_)) {}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string location_of(const YAML::Node& node, const YamlSource& source, const std::string& path) {
  if (is_overridden(source, path)) return fmt::format("--set:1:1: {}", path);
  const YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  const int line = mark.is_null() ? 1 : mark.line + 1;
  const int col = mark.is_null() ? 1 : mark.column + 1;
  return fmt::format("{}:{}:{}: {}", source.file, line, col, path.empty() ? "(top)" : path);
}

void fail_at(const YAML::Node& node, const YamlSource& source, const std::string& path, const std::string& message,
             InputErrorReason reason) {
  throw InputError(fmt::format("{}: {}", location_of(node, source, path), message), reason, path);
}

YAML::Node load_yaml_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file)) throw InputError(fmt::format("{}:1:1: (file): cannot open file", file));
  // Read at most the limit plus one byte: /dev/zero or a huge file is refused, not read to the end. In blocks: a
  // buffer of the whole limit would be zeroed for every small file (16 MiB per input, ~40 ms of a short run).
  std::string text;
  char block[64 * 1024];
  while (text.size() <= limits::kMaxInputFile_bytes && in) {
    const std::size_t want = std::min(sizeof block, limits::kMaxInputFile_bytes + 1 - text.size());
    in.read(block, static_cast<std::streamsize>(want));
    text.append(block, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > limits::kMaxInputFile_bytes)
    throw InputError(fmt::format("{}:1:1: (file): larger than {} bytes; not a scenario, model or preset file", file,
                                 limits::kMaxInputFile_bytes));
  if (const std::size_t bad = first_bad_byte(text); bad != std::string::npos) {
    const auto [line, col] = position_of(text, bad);
    throw InputError(fmt::format("{}:{}:{}: (file): {} byte: files must be UTF-8 text", file, line, col,
                                 text[bad] == 0 ? "a NUL" : "a non-UTF-8"));
  }
  if (const int line = second_document_line(text))
    throw InputError(fmt::format("{}:{}:1: (file): a second YAML document; a file holds one", file, line));
  try {
    return YAML::Load(text);  // not LoadAll: yaml-cpp 0.7's LoadAll can loop forever on a malformed document
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}:{}: (syntax): {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

MapReader::MapReader(const YAML::Node& node, const YamlSource& source, std::string path)
    : node_(node), source_(source), path_(std::move(path)) {
  // A missing key of a const node is an invalid node, on which yaml-cpp's type queries throw: test it first.
  if (!node_.IsDefined()) fail_at(node_, source_, path_, "missing (expected a mapping)");
  if (!node_.IsMap()) fail_at(node_, source_, path_, "expected a mapping, got " + type_name(node_));
  // yaml-cpp keeps the first of two equal keys silently: a repeated key is an error at its second place.
  std::set<std::string> seen;
  for (const auto& kv : node_)
    if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
      fail_at(kv.first, source_, join_path(path_, kv.first.Scalar()), "duplicate key");
}

// A key written with no value (`cp:` or `--set parallel.cp=`) is present: reading it is an error, never the default.
bool MapReader::has(const std::string& key) const { return node_[key].IsDefined(); }

YAML::Node MapReader::node(const std::string& key) {
  used_.insert(key);
  const YAML::Node v = node_[key];
  if (!v.IsDefined()) fail_at(node_, source_, path_of(key), "missing required key");
  if (v.IsNull()) fail_at(v, source_, path_of(key), "empty value");
  return v;
}

void MapReader::fail(const std::string& key, const std::string& message) const {
  const YAML::Node v = node_[key];
  fail_at(v.IsDefined() ? v : node_, source_, path_of(key), message);
}

std::string MapReader::location(const std::string& key) const {
  const YAML::Node v = node_[key];
  return location_of(v.IsDefined() ? v : node_, source_, path_of(key));
}

void MapReader::fail_here(const std::string& message) const { fail_at(node_, source_, path_, message); }

std::string MapReader::scalar(const std::string& key, const char* expected) {
  const YAML::Node v = node(key);
  if (!v.IsScalar()) fail(key, fmt::format("expected {}, got {}", expected, type_name(v)));
  return v.Scalar();
}

std::string MapReader::text(const std::string& key) { return scalar(key, "a string"); }
std::string MapReader::text_or(const std::string& key, const std::string& fallback) {
  return has(key) ? text(key) : (used_.insert(key), fallback);
}

std::string MapReader::choice(const std::string& key, const std::vector<std::string>& allowed) {
  const std::string v = text(key);
  for (const auto& a : allowed)
    if (v == a) return v;
  fail(key, fmt::format("'{}' is not one of: {}", v, fmt::join(allowed, ", ")));
}

std::string MapReader::choice_or(const std::string& key, const std::vector<std::string>& allowed,
                                 const std::string& fallback) {
  return has(key) ? choice(key, allowed) : (used_.insert(key), fallback);
}

std::int64_t MapReader::integer(const std::string& key, std::int64_t min_value, std::int64_t max_value) {
  const std::string s = scalar(key, "an integer");
  std::size_t used = 0;
  long long v = 0;
  bool out_of_range = false;
  try {
    v = std::stoll(s, &used);
  } catch (const std::out_of_range&) {
    out_of_range = true;
  } catch (...) {
    used = 0;
  }
  if (out_of_range) fail(key, fmt::format("must be at most {}, got {}", max_value, s));
  if (used == 0 || used != s.size()) fail(key, fmt::format("expected an integer, got {}", quoted(s)));
  if (v < min_value) fail(key, fmt::format("must be at least {}, got {}", min_value, v));
  if (v > max_value) fail(key, fmt::format("must be at most {}, got {}", max_value, v));
  return v;
}

std::int64_t MapReader::integer_or(const std::string& key, std::int64_t fallback, std::int64_t min_value,
                                   std::int64_t max_value) {
  return has(key) ? integer(key, min_value, max_value) : (used_.insert(key), fallback);
}

double MapReader::number(const std::string& key, double min_value, double max_value) {
  const std::string s = scalar(key, "a number");
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(key, fmt::format("expected a number, got {}", quoted(s)));
  if (!std::isfinite(v)) fail(key, fmt::format("expected a finite number, got '{}'", s));
  if (v < min_value || v > max_value)
    fail(key, fmt::format("must be between {} and {}, got {}", min_value, max_value, s));
  return v;
}

double MapReader::number_or(const std::string& key, double fallback, double min_value, double max_value) {
  return has(key) ? number(key, min_value, max_value) : (used_.insert(key), fallback);
}

bool MapReader::flag_or(const std::string& key, bool fallback) {
  if (!has(key)) return used_.insert(key), fallback;
  const std::string s = scalar(key, "true or false");
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, fmt::format("expected true or false, got '{}'", s));
}

template <class T>
T MapReader::quantity(const std::string& key, std::optional<T> (*parse)(const std::string&), const char* expected,
                      T max_value) {
  const std::string s = scalar(key, expected);
  const auto v = parse(s);
  if (!v) fail(key, fmt::format("expected {}, got '{}'", expected, s));
  if (*v > max_value) {
    if constexpr (std::is_integral_v<T>) fail(key, fmt::format("must be at most {}, got '{}'", max_value, s));
    else fail(key, fmt::format("must be at most {:g}, got '{}'", max_value, s));
  }
  return *v;
}

std::uint64_t MapReader::count(const std::string& key) {
  return quantity<std::uint64_t>(key, parse_count, "a count such as 4096, 128K or 1M", limits::kMaxTokens);
}
std::uint64_t MapReader::count_or(const std::string& key, std::uint64_t fallback) {
  return has(key) ? count(key) : (used_.insert(key), fallback);
}
double MapReader::bandwidth_Bps(const std::string& key) {
  return quantity<double>(key, parse_bandwidth_Bps, "a bandwidth such as 450GBps or 400Gbps",
                          limits::kMaxBandwidth_Bps);
}
std::optional<double> MapReader::bandwidth_Bps_opt(const std::string& key) {
  if (!has(key)) return used_.insert(key), std::nullopt;
  return bandwidth_Bps(key);
}
double MapReader::time_s(const std::string& key) {
  return quantity<double>(key, parse_time_s, "a time such as 1us", limits::kMaxTime_s);
}
double MapReader::seconds(const std::string& key) {
  return quantity<double>(key, parse_seconds, "seconds such as 2 or a time such as 50ms", limits::kMaxTime_s);
}
std::optional<double> MapReader::time_s_opt(const std::string& key) {
  if (!has(key)) return used_.insert(key), std::nullopt;
  return time_s(key);
}
double MapReader::size_bytes_or(const std::string& key, double fallback) {
  if (!has(key)) return used_.insert(key), fallback;
  return quantity<double>(key, parse_size_bytes, "a size such as 80GiB", limits::kMaxSize_bytes);
}
double MapReader::flops_or(const std::string& key, double fallback) {
  if (!has(key)) return used_.insert(key), fallback;
  return quantity<double>(key, parse_flops, "a flop rate such as 989Tf", limits::kMaxFlops);
}

MapReader MapReader::map(const std::string& key) { return MapReader(node(key), source_, path_of(key)); }

std::string key_name(const YAML::Node& key, const YamlSource& source, const std::string& parent_path) {
  if (!key.IsScalar()) fail_at(key, source, parent_path, "a key must be a plain name, got " + type_name(key));
  return key.Scalar();
}

void MapReader::finish() const {
  for (const auto& kv : node_) {
    const std::string key = key_name(kv.first, source_, path_);
    if (!used_.count(key)) fail_at(kv.first, source_, path_of(key), "unknown key", InputErrorReason::kUnknownKey);
  }
}

}  // namespace cpsim
