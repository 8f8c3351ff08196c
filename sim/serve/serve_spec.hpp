// The `serve:` block of a scenario with `run.phase: serve` (docs/serving.md): a request source, a policy that
// partitions the platform into CP x TP instances and sends each request to one, and how each instance schedules its
// requests (chunked prefill, continuous batching of decode, admission by KV memory).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cpsim {

// A length distribution (serve.source.prompt_tokens, output_tokens, cached_tokens): a fixed count, a choice among
// values with weights, uniform in [lo, hi], or log-normal around a median (clamped to [lo, hi]).
struct LengthDistribution {
  enum class Kind { FIXED, CHOICE, UNIFORM, LOGNORMAL } kind = Kind::FIXED;
  std::vector<std::uint64_t> values;  // FIXED: one value; CHOICE: the values
  std::vector<double> weights;        // CHOICE: one per value (normalised)
  std::uint64_t lo = 0, hi = 0;       // UNIFORM bounds; LOGNORMAL clamp
  double median = 0, sigma = 0;       // LOGNORMAL
};

// Where requests come from: generated arrivals (Poisson, or gamma with a coefficient of variation), or a trace file
// (CSV or JSONL: arrival_s, prompt_tokens, output_tokens[, cached_tokens]).
struct RequestSourceSpec {
  enum class Arrivals { POISSON, GAMMA, TRACE } arrivals = Arrivals::POISSON;
  double rate_per_s = 1;
  double cv = 1;           // gamma: the inter-arrival coefficient of variation (1 = Poisson)
  int requests = 100;      // generated requests (a trace: at most this many of its rows; 0 = all)
  double duration_s = 0;   // > 0: stop generating arrivals after this time
  std::uint64_t seed = 1;
  LengthDistribution prompt_tokens, output_tokens, cached_tokens;
  std::string file;        // TRACE: the resolved path
};

// One class of instances: `count` groups of cp x tp GPUs, serving the prompts up to `max_prompt_tokens`
// (0 = no bound; the policy's last class takes what the others do not).
struct InstanceClass {
  int cp = 1;
  int count = 1;
  std::uint64_t max_prompt_tokens = 0;
  int max_batch = 0;     // requests admitted at once on each of its instances (0: serve.scheduler.max_batch)
  std::string location;  // where an error about this class points ("file:line:col: serve.policy...")
};

enum class ServePolicy { STATIC, LENGTH_BUCKETS };
enum class PrefillAlgorithm { PASS_KV, PASS_Q, BY_MISS_RATE };

struct ServeSpec {
  RequestSourceSpec source;
  ServePolicy policy = ServePolicy::STATIC;
  std::string policy_name;             // the chosen entry of serve.policies ("" for an inline policy)
  std::vector<InstanceClass> classes;  // STATIC: one class; LENGTH_BUCKETS: one per bucket, ascending bounds
  int tp = 1;                          // every instance's TP degree (parallel.tp)
  PrefillAlgorithm prefill_algorithm = PrefillAlgorithm::PASS_KV;
  double miss_rate_threshold = 0.05;   // BY_MISS_RATE: pass-Q below this KV miss rate (new / (new + cached))
  bool decode_pass_q = false;          // decode CP algorithm: tree (default) or pass-Q
  std::uint64_t chunk_tokens = 0;      // chunked prefill: prompt tokens per iteration beside the decode batch (0 = whole)
  int max_batch = 64;                  // continuous batching: decode requests per iteration
  bool refuse_when_full = false;       // on_kv_full: refuse a request whose KV does not fit now (else it waits)
  double slo_ttft_s = 0, slo_tpot_s = 0;  // goodput: requests meeting both (0 = no bound)
  double max_time_s = 0;               // stop the clock here (0 = when every request is done)
  std::string cost_cache_dir;          // where simulated step costs persist ("" = none)
};

}  // namespace cpsim
