#include "sim/serve/request_source.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "platforms/platform_spec.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t draw_length(const LengthDistribution& d, Rng& rng) {
  switch (d.kind) {
    case LengthDistribution::Kind::FIXED:
      return d.values.front();
    case LengthDistribution::Kind::CHOICE: {
      const double u = rng.uniform();
      double acc = 0;
      for (std::size_t i = 0; i < d.values.size(); ++i)
        if (u < (acc += d.weights[i])) return d.values[i];
      return d.values.back();  // rounding: the weights sum to 1 - epsilon
    }
    case LengthDistribution::Kind::UNIFORM:
      return d.lo + std::min<std::uint64_t>(d.hi - d.lo, std::uint64_t(rng.uniform() * double(d.hi - d.lo + 1)));
    case LengthDistribution::Kind::LOGNORMAL: {
      const double v = std::llround(d.median * std::exp(d.sigma * rng.normal()));
      return std::clamp<std::uint64_t>(std::uint64_t(std::max(1.0, v)), d.lo, d.hi);
    }
  }
  return 1;
}

[[noreturn]] void fail_row(const std::string& file, int line, const std::string& message) {
  throw InputError(fmt::format("{}:{}:1: serve.source.file: {}", display_path(file), line, message));
}

std::uint64_t row_count(const std::string& file, int line, const std::string& field, const std::string& text) {
  const auto v = parse_count(text);
  if (!v) fail_row(file, line, fmt::format("{}: '{}' is not a token count", field, text));
  return *v;
}

double row_time(const std::string& file, int line, const std::string& text) {
  const auto v = parse_seconds(text);
  if (!v || *v < 0) fail_row(file, line, fmt::format("arrival_s: '{}' is not a time >= 0", text));
  return *v;
}

void check_request(const std::string& file, int line, const Request& r) {
  if (r.prompt_tokens == 0) fail_row(file, line, "prompt_tokens must be positive");
  if (r.output_tokens == 0) fail_row(file, line, "output_tokens must be positive (the prefill makes the first)");
  if (r.cached_tokens >= r.prompt_tokens)
    fail_row(file, line, "cached_tokens must be smaller than prompt_tokens (a prefill computes at least one token)");
}

// CSV with a header naming arrival_s, prompt_tokens, output_tokens and optionally cached_tokens, in any order; or
// JSONL, one object per line with the same keys.
std::vector<Request> read_trace(const RequestSourceSpec& spec) {
  std::ifstream in(spec.file);
  if (!in) throw InputError(fmt::format("{}:1:1: serve.source.file: cannot be read", display_path(spec.file)));
  std::vector<Request> out;
  std::string text;
  int line = 0;
  std::vector<std::string> header;
  const bool jsonl = spec.file.size() > 6 && spec.file.substr(spec.file.size() - 6) == ".jsonl";
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos || text[0] == '#') continue;
    Request r;
    r.id = int(out.size());
    if (jsonl) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception&) {
        fail_row(spec.file, line, "not a JSON object");
      }
      const auto field = [&](const char* key, bool required) -> std::string {
        if (!j.is_object() || !j.contains(key)) {
          if (required) fail_row(spec.file, line, fmt::format("missing {}", key));
          return "";
        }
        return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
      };
      r.arrival_s = row_time(spec.file, line, field("arrival_s", true));
      r.prompt_tokens = row_count(spec.file, line, "prompt_tokens", field("prompt_tokens", true));
      r.output_tokens = row_count(spec.file, line, "output_tokens", field("output_tokens", true));
      const std::string cached = field("cached_tokens", false);
      r.cached_tokens = cached.empty() ? 0 : row_count(spec.file, line, "cached_tokens", cached);
    } else {
      std::vector<std::string> cells;
      std::stringstream ss(text);
      for (std::string cell; std::getline(ss, cell, ',');) {
        cell.erase(0, cell.find_first_not_of(" \t"));
        cell.erase(cell.find_last_not_of(" \t") + 1);
        cells.push_back(cell);
      }
      if (header.empty()) {
        header = cells;
        for (const char* need : {"arrival_s", "prompt_tokens", "output_tokens"})
          if (std::find(header.begin(), header.end(), need) == header.end())
            fail_row(spec.file, line, fmt::format("the header must name {}", need));
        continue;
      }
      if (cells.size() != header.size())
        fail_row(spec.file, line, fmt::format("{} cells, the header has {}", cells.size(), header.size()));
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (header[i] == "arrival_s") r.arrival_s = row_time(spec.file, line, cells[i]);
        else if (header[i] == "prompt_tokens") r.prompt_tokens = row_count(spec.file, line, header[i], cells[i]);
        else if (header[i] == "output_tokens") r.output_tokens = row_count(spec.file, line, header[i], cells[i]);
        else if (header[i] == "cached_tokens") r.cached_tokens = row_count(spec.file, line, header[i], cells[i]);
      }
    }
    check_request(spec.file, line, r);
    out.push_back(r);
    if (spec.requests > 0 && int(out.size()) == spec.requests) break;
  }
  if (out.empty()) fail_row(spec.file, std::max(line, 1), "the trace has no requests");
  return out;
}

std::vector<Request> generate(const RequestSourceSpec& spec) {
  Rng arrivals(spec.seed), lengths(spec.seed ^ 0x5bd1e995ULL);
  std::vector<Request> out;
  double t = 0;
  const double mean_gap_s = 1.0 / spec.rate_per_s;
  for (int i = 0; i < spec.requests; ++i) {
    // Poisson: exponential gaps; gamma: shape 1/cv^2, scaled to the same mean gap.
    const double gap = spec.arrivals == RequestSourceSpec::Arrivals::GAMMA
                           ? arrivals.gamma(1.0 / (spec.cv * spec.cv)) * spec.cv * spec.cv * mean_gap_s
                           : -std::log1p(-arrivals.uniform()) * mean_gap_s;
    t += gap;
    if (spec.duration_s > 0 && t > spec.duration_s) break;
    Request r;
    r.id = i;
    r.arrival_s = t;
    r.prompt_tokens = std::max<std::uint64_t>(1, draw_length(spec.prompt_tokens, lengths));
    r.output_tokens = std::max<std::uint64_t>(1, draw_length(spec.output_tokens, lengths));
    r.cached_tokens = std::min(draw_length(spec.cached_tokens, lengths), r.prompt_tokens - 1);
    out.push_back(r);
  }
  return out;
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double Rng::gamma(double shape) {
  if (shape < 1) return gamma(shape + 1) * std::pow(1.0 - uniform(), 1.0 / shape);  // boost: G(a) = G(a+1) U^(1/a)
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

std::vector<Request> make_requests(const RequestSourceSpec& spec) {
  std::vector<Request> out =
      spec.arrivals == RequestSourceSpec::Arrivals::TRACE ? read_trace(spec) : generate(spec);
  std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  return out;
}

}  // namespace cpsim
