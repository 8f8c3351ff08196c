// serve.policy.prefill_algorithm: pass-kv (ring), pass-q, or by-miss-rate: Meta's production rule (cp-overview.md:
// "prefill passes KV, decode passes Q, chosen by the KV miss rate, crossover ~5%"), per request: with T new tokens
// after P cached ones the miss rate is T / (T + P); below the threshold the new queries are the smaller thing to move.
#include "sim/serve/serve_policy.hpp"

namespace cpsim {

bool prefill_passes_q(const ServeSpec& spec, const Request& r, int cp) {
  if (cp <= 1) return false;
  switch (spec.prefill_algorithm) {
    case PrefillAlgorithm::PASS_KV:
      return false;
    case PrefillAlgorithm::PASS_Q:
      return true;
    case PrefillAlgorithm::BY_MISS_RATE: {
      const double new_tokens = double(r.prompt_tokens - r.cached_tokens);
      return new_tokens / double(r.prompt_tokens) < spec.miss_rate_threshold;
    }
  }
  return false;
}

}  // namespace cpsim
