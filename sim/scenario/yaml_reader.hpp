// Reading YAML with located errors. Every user-input problem becomes an InputError whose message is
// `file:line:col: key.path: message` (1-based line and column), and every mapping rejects keys it does not know.
#pragma once
#include "workloads/enum_names.hpp"
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "sim/scenario/input_limits.hpp"

namespace cpsim {

// A user-input error, already formatted for a one-line report: control characters that came from the input
// (a stray byte echoed back by the YAML parser, say) are escaped so the report stays on one line.
// What went wrong, for callers that react to it (the sweep reports an axis naming no key once, not per point):
// decided where the error is raised, never by reading the message back.
enum class InputErrorReason { kInvalid, kUnknownKey };

struct InputError : std::runtime_error {
  explicit InputError(const std::string& message, InputErrorReason reason = InputErrorReason::kInvalid,
                      std::string key_path = {});
  InputErrorReason reason;
  std::string key_path;  // the key the error is about, when there is one ("parallel.cp")
};

// Where the nodes being read came from: a file, plus the key paths that `--set` replaced on the command line.
struct YamlSource {
  std::string file;
  std::set<std::string> overridden_paths;
};

// "file:line:col: key.path" of `node` (or "--set:1:1: key.path" when the command line replaced it): what an error
// about it starts with.
std::string location_of(const YAML::Node& node, const YamlSource& source, const std::string& path);
[[noreturn]] void fail_at(const YAML::Node& node, const YamlSource& source, const std::string& path,
                          const std::string& message, InputErrorReason reason = InputErrorReason::kInvalid);
std::string join_path(const std::string& parent, const std::string& key);
// The text of a mapping key; a key that is itself a mapping or sequence is an InputError at its position.
std::string key_name(const YAML::Node& key, const YamlSource& source, const std::string& parent_path);

// Reads one YAML mapping; call finish() once every known key has been read to reject the unknown ones.
class MapReader {
 public:
  MapReader(const YAML::Node& node, const YamlSource& source, std::string path);

  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key);  // the value (required)
  std::string path_of(const std::string& key) const { return join_path(path_, key); }
  const std::string& path() const { return path_; }
  const YamlSource& source() const { return source_; }
  const YAML::Node& self() const { return node_; }

  std::string text(const std::string& key);
  std::string text_or(const std::string& key, const std::string& fallback);
  std::string choice(const std::string& key, const std::vector<std::string>& allowed);
  std::string choice_or(const std::string& key, const std::vector<std::string>& allowed, const std::string& fallback);
  // A choice among an enum's names (workloads/enum_names.hpp), converted to its value.
  template <class E, std::size_t N>
  E choice_or(const std::string& key, const EnumNames<E, N>& names, E fallback) {
    return *names.parse(choice_or(key, names.names(), names.name(fallback)));
  }
  // Integers are range-checked: at least `min_value`, at most `max_value` (sim/scenario/input_limits.hpp: they fit an int).
  std::int64_t integer(const std::string& key, std::int64_t min_value = -limits::kMaxInteger,
                       std::int64_t max_value = limits::kMaxInteger);
  std::int64_t integer_or(const std::string& key, std::int64_t fallback, std::int64_t min_value = -limits::kMaxInteger,
                          std::int64_t max_value = limits::kMaxInteger);
  // Reals are finite and within [min_value, max_value].
  double number(const std::string& key, double min_value = -limits::kMaxReal, double max_value = limits::kMaxReal);
  double number_or(const std::string& key, double fallback, double min_value = -limits::kMaxReal,
                   double max_value = limits::kMaxReal);
  bool flag_or(const std::string& key, bool fallback);
  // Token counts: an integer, or with a K/M/G suffix (binary), at most limits::kMaxTokens.
  std::uint64_t count(const std::string& key);
  std::uint64_t count_or(const std::string& key, std::uint64_t fallback);
  double bandwidth_Bps(const std::string& key);
  std::optional<double> bandwidth_Bps_opt(const std::string& key);
  double time_s(const std::string& key);
  double seconds(const std::string& key);  // parse_seconds: a plain number of seconds, or a time with its unit
  std::optional<double> time_s_opt(const std::string& key);
  double size_bytes_or(const std::string& key, double fallback);
  double flops_or(const std::string& key, double fallback);
  MapReader map(const std::string& key);

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  std::string location(const std::string& key) const;  // where fail(key, ...) would point, for a later error
  [[noreturn]] void fail_here(const std::string& message) const;
  void finish() const;

 private:
  std::string scalar(const std::string& key, const char* expected);
  template <class T>
  T quantity(const std::string& key, std::optional<T> (*parse)(const std::string&), const char* expected,
             T max_value);

  YAML::Node node_;
  const YamlSource& source_;
  std::string path_;
  std::set<std::string> used_;
};

// Loads a YAML file; a syntax error becomes an InputError at the offending position.
YAML::Node load_yaml_file(const std::string& file);

}  // namespace cpsim
