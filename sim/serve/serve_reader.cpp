#include "sim/serve/serve_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "platforms/platform_spec.hpp"
#include "sim/scenario/units.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "sim/serve/step_cost_cache.hpp"

namespace cpsim {
namespace {

constexpr const char* kCountExpected = "a token count such as 4096, 128K or 1M";

std::uint64_t count_item(const YAML::Node& n, MapReader& r, const std::string& key) {
  const auto v = n.IsScalar() ? parse_count(n.Scalar()) : std::nullopt;
  if (!v) fail_at(n, r.source(), r.path_of(key), std::string("expected ") + kCountExpected);
  return *v;
}

// A length: `4K`, `{choice: [4K, 1M], weights: [0.9, 0.1]}`, `{uniform: [1K, 8K]}` or
// `{lognormal: {median: 2K, sigma: 1, min: 16, max: 32K}}`.
LengthDistribution read_length(MapReader& parent, const std::string& key) {
  LengthDistribution d;
  if (!parent.node(key).IsMap()) {
    d.values = {parent.count(key)};
    return d;
  }
  MapReader r = parent.map(key);
  const int forms = int(r.has("choice")) + int(r.has("uniform")) + int(r.has("lognormal"));
  if (forms != 1) r.fail_here("give one of choice, uniform or lognormal (or a plain count)");
  if (r.has("choice")) {
    d.kind = LengthDistribution::Kind::CHOICE;
    const YAML::Node values = r.node("choice");
    if (!values.IsSequence() || values.size() == 0) r.fail("choice", "expected a non-empty list of token counts");
    for (const auto& v : values) d.values.push_back(count_item(v, r, "choice"));
    if (r.has("weights")) {
      const YAML::Node w = r.node("weights");
      if (!w.IsSequence() || w.size() != values.size())
        r.fail("weights", fmt::format("expected {} weights, one per value of choice", values.size()));
      double total = 0;
      for (const auto& x : w) {
        double v = -1;
        try {
          v = x.as<double>();
        } catch (const YAML::Exception&) {
        }
        if (!(v >= 0) || v > 1e12) fail_at(x, r.source(), r.path_of("weights"), "expected a non-negative number");
        d.weights.push_back(v);
        total += v;
      }
      if (total <= 0) r.fail("weights", "the weights sum to 0");
      for (double& v : d.weights) v /= total;
    } else {
      d.weights.assign(d.values.size(), 1.0 / double(d.values.size()));
    }
  } else if (r.has("uniform")) {
    d.kind = LengthDistribution::Kind::UNIFORM;
    const YAML::Node b = r.node("uniform");
    if (!b.IsSequence() || b.size() != 2) r.fail("uniform", "expected [lo, hi]");
    d.lo = count_item(b[0], r, "uniform");
    d.hi = count_item(b[1], r, "uniform");
    if (d.hi < d.lo) r.fail("uniform", "expected lo <= hi");
  } else {
    d.kind = LengthDistribution::Kind::LOGNORMAL;
    MapReader ln = r.map("lognormal");
    d.median = double(ln.count("median"));
    d.sigma = ln.number("sigma", 0, 10);
    d.lo = ln.count_or("min", 1);
    d.hi = ln.count_or("max", limits::kMaxTokens);
    if (d.hi < d.lo) ln.fail("max", "expected min <= max");
    ln.finish();
  }
  r.finish();
  return d;
}

RequestSourceSpec read_source(MapReader& r, const std::string& dir) {
  RequestSourceSpec s;
  const std::string arrivals = r.choice_or("arrivals", {"poisson", "gamma", "trace"}, "poisson");
  s.arrivals = arrivals == "gamma"   ? RequestSourceSpec::Arrivals::GAMMA
               : arrivals == "trace" ? RequestSourceSpec::Arrivals::TRACE
                                     : RequestSourceSpec::Arrivals::POISSON;
  s.seed = std::uint64_t(r.integer_or("seed", 1, 0));
  if (s.arrivals == RequestSourceSpec::Arrivals::TRACE) {
    const std::string file = r.text("file");
    s.file = resolve_input_path(file, dir);
    if (s.file.empty()) r.fail("file", fmt::format("trace file '{}' not found", file));
    s.requests = int(r.integer_or("requests", 0, 0, 10000000));
    for (const char* k : {"rate_per_s", "cv", "prompt_tokens", "output_tokens", "cached_tokens", "duration_s"})
      if (r.has(k)) r.fail(k, "a trace gives every request's arrival and lengths (arrivals: trace)");
    r.finish();
    return s;
  }
  if (r.has("file")) r.fail("file", "a file is read with arrivals: trace");
  s.rate_per_s = r.number("rate_per_s", 1e-9, 1e9);
  if (s.arrivals == RequestSourceSpec::Arrivals::GAMMA) s.cv = r.number_or("cv", 1, 0.01, 100);
  else if (r.has("cv")) r.fail("cv", "the coefficient of variation shapes gamma arrivals (arrivals: gamma)");
  s.requests = int(r.integer_or("requests", 100, 1, 10000000));
  s.duration_s = r.has("duration_s") ? r.seconds("duration_s") : 0;
  s.prompt_tokens = read_length(r, "prompt_tokens");
  s.output_tokens = read_length(r, "output_tokens");
  if (r.has("cached_tokens")) s.cached_tokens = read_length(r, "cached_tokens");
  else s.cached_tokens.values = {0};
  r.finish();
  return s;
}

InstanceClass read_class(MapReader& r, int default_count) {
  InstanceClass c;
  c.location = r.location("cp");
  c.cp = int(r.integer("cp", 1, 4096));
  c.count = int(r.integer_or("instances", default_count, 1, 100000));
  c.max_batch = int(r.integer_or("max_batch", 0, 1, 4096));
  return c;
}

// One policy mapping: kind static ({cp, instances}) or length-buckets ({buckets: [{max_prompt, cp, instances}]}),
// and the prefill and decode algorithms.
void read_policy(MapReader& p, ServeSpec& s, int gpus, int tp) {
  s.classes.clear();
  const std::string kind = p.choice("kind", {"static", "length-buckets"});
  if (kind == "static") {
    s.policy = ServePolicy::STATIC;
    InstanceClass c = read_class(p, 0);
    if (c.count == 0) c.count = gpus / (c.cp * tp);  // every instance that fits
    if (c.count == 0)
      p.fail("cp", fmt::format("one instance of cp {} x tp {} needs {} GPUs; the platform has {}", c.cp, tp,
                               c.cp * tp, gpus));
    s.classes.push_back(c);
    if (p.has("buckets")) p.fail("buckets", "buckets belong to kind: length-buckets");
  } else {
    s.policy = ServePolicy::LENGTH_BUCKETS;
    const YAML::Node list = p.node("buckets");
    if (!list.IsSequence() || list.size() == 0) p.fail("buckets", "expected a list of {max_prompt, cp, instances}");
    for (std::size_t i = 0; i < list.size(); ++i) {
      MapReader b(list[i], p.source(), p.path_of("buckets") + fmt::format("[{}]", i));
      InstanceClass c = read_class(b, 1);
      const bool last = i + 1 == list.size();
      if (!last) {
        c.max_prompt_tokens = b.count("max_prompt");
        if (!s.classes.empty() && c.max_prompt_tokens <= s.classes.back().max_prompt_tokens)
          b.fail("max_prompt", "bucket bounds must increase");
      } else if (b.has("max_prompt")) {
        b.fail("max_prompt", "the last bucket takes every longer prompt: leave its max_prompt out");
      }
      b.finish();
      s.classes.push_back(c);
    }
    for (const char* k : {"cp", "instances"})
      if (p.has(k)) p.fail(k, "a length-buckets policy sets cp and instances per bucket");
  }
  int used = 0;
  for (const InstanceClass& c : s.classes) used += c.cp * tp * c.count;
  if (used > gpus)
    p.fail_here(fmt::format("the instances need {} GPUs (cp x tp x instances, summed); the platform has {}", used,
                            gpus));
  const std::string algorithm = p.choice_or("prefill_algorithm", {"pass-kv", "pass-q", "by-miss-rate"}, "pass-kv");
  s.prefill_algorithm = algorithm == "pass-q"         ? PrefillAlgorithm::PASS_Q
                        : algorithm == "by-miss-rate" ? PrefillAlgorithm::BY_MISS_RATE
                                                      : PrefillAlgorithm::PASS_KV;
  s.miss_rate_threshold = p.number_or("miss_rate_threshold", 0.05, 0, 1);
  s.decode_pass_q = p.choice_or("decode_algorithm", {"tree", "pass-q"}, "tree") == "pass-q";
  p.finish();
}

}  // namespace

ServeSpec read_serve(MapReader& r, const std::string& dir, int gpus, int tp) {
  ServeSpec s;
  s.tp = tp;
  {
    MapReader src = r.map("source");
    s.source = read_source(src, dir);
  }
  // serve.policy: a mapping, or the name of one of serve.policies (so that a sweep axis can name policies).
  if (r.has("policies")) {
    MapReader all = r.map("policies");
    if (!all.self().IsMap() || all.self().size() == 0) r.fail("policies", "expected a mapping of name -> policy");
    std::vector<std::string> names;
    for (const auto& kv : all.self()) names.push_back(key_name(kv.first, all.source(), all.path()));
    const YAML::Node chosen = r.node("policy");
    if (!chosen.IsScalar()) r.fail("policy", "with serve.policies, name one of them");
    if (std::find(names.begin(), names.end(), chosen.Scalar()) == names.end())
      r.fail("policy", fmt::format("'{}' is not one of serve.policies", chosen.Scalar()));
    ServeSpec picked;
    for (const std::string& name : names) {  // every policy is checked, the chosen one is kept
      MapReader p = all.map(name);
      ServeSpec trial = s;
      read_policy(p, trial, gpus, tp);
      if (name == chosen.Scalar()) picked = trial;
    }
    all.finish();
    s = picked;
    s.policy_name = chosen.Scalar();
  } else {
    MapReader p = r.map("policy");
    read_policy(p, s, gpus, tp);
  }
  if (r.has("scheduler")) {
    MapReader sch = r.map("scheduler");
    s.chunk_tokens = sch.count_or("chunk_tokens", 0);
    s.max_batch = int(sch.integer_or("max_batch", 64, 1, 4096));
    s.refuse_when_full = sch.choice_or("on_kv_full", {"wait", "refuse"}, "wait") == "refuse";
    sch.finish();
  }
  if (r.has("slo")) {
    MapReader slo = r.map("slo");
    if (slo.has("ttft_s")) s.slo_ttft_s = slo.seconds("ttft_s");
    if (slo.has("tpot_s")) s.slo_tpot_s = slo.seconds("tpot_s");
    slo.finish();
  }
  if (r.has("max_time_s")) s.max_time_s = r.seconds("max_time_s");
  const std::string cache = r.text_or("cost_cache", "auto");
  if (cache == "auto") s.cost_cache_dir = default_step_cost_cache_dir();
  else if (cache != "none")
    s.cost_cache_dir = std::filesystem::path(cache).is_absolute() ? cache : (std::filesystem::path(dir) / cache).string();
  r.finish();
  return s;
}

}  // namespace cpsim
