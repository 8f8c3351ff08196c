// Serving policies (docs/serving.md, "Policies"), one interface, one file each:
//   routing (serve.policy.kind): which instance class serves a request: static (one CP degree for all), or
//     length-buckets (NanoCP / vLLM dynamic prefill CP: the CP degree by prompt length, from a bucket table);
//   prefill algorithm (serve.policy.prefill_algorithm): pass-KV, pass-Q, or by KV miss rate per request (Meta's
//     rule: pass-Q when new / (new + cached) is below the threshold).
// Chunked prefill, continuous batching and admission by KV memory are the instance scheduler's
// (sim/serve/serve_simulation.hpp).
#pragma once
#include <memory>

#include "sim/serve/request_source.hpp"
#include "sim/serve/serve_spec.hpp"

namespace cpsim {

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  // The index of the instance class in ServeSpec::classes that serves `r`.
  virtual int instance_class(const Request& r) const = 0;
};

std::unique_ptr<RoutingPolicy> make_static_routing(const ServeSpec& spec);          // policy_static.cpp
std::unique_ptr<RoutingPolicy> make_length_bucket_routing(const ServeSpec& spec);   // policy_length_buckets.cpp
std::unique_ptr<RoutingPolicy> make_routing(const ServeSpec& spec);

// Whether `r`'s prefill passes Q (else KV) on an instance of `cp` GPUs groups (prefill_algorithm.cpp).
bool prefill_passes_q(const ServeSpec& spec, const Request& r, int cp);

}  // namespace cpsim
