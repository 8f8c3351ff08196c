// serve.policy.kind: static: one CP degree for every request, on as many instances as the policy names (by default
// every one that fits the platform).
#include "sim/serve/serve_policy.hpp"

namespace cpsim {
namespace {

class StaticRouting final : public RoutingPolicy {
 public:
  int instance_class(const Request&) const override { return 0; }
};

}  // namespace

std::unique_ptr<RoutingPolicy> make_static_routing(const ServeSpec&) { return std::make_unique<StaticRouting>(); }

std::unique_ptr<RoutingPolicy> make_routing(const ServeSpec& spec) {
  return spec.policy == ServePolicy::LENGTH_BUCKETS ? make_length_bucket_routing(spec) : make_static_routing(spec);
}

}  // namespace cpsim
