// serve.policy.kind: length-buckets: the CP degree by prompt length (NanoCP's request-level CP degree; vLLM's
// dynamic prefill CP): a prompt goes to the first bucket whose max_prompt holds it, the last bucket takes the rest.
// Short prompts then run on small instances that waste no GPUs on them, long ones on instances wide enough to
// prefill them quickly and to hold their KV, and neither waits behind the other.
#include "sim/serve/serve_policy.hpp"

namespace cpsim {
namespace {

class LengthBucketRouting final : public RoutingPolicy {
 public:
  explicit LengthBucketRouting(const ServeSpec& spec) : classes_(spec.classes) {}
  int instance_class(const Request& r) const override {
    for (std::size_t i = 0; i + 1 < classes_.size(); ++i)
      if (r.prompt_tokens <= classes_[i].max_prompt_tokens) return int(i);
    return int(classes_.size()) - 1;
  }

 private:
  std::vector<InstanceClass> classes_;
};

}  // namespace

std::unique_ptr<RoutingPolicy> make_length_bucket_routing(const ServeSpec& spec) {
  return std::make_unique<LengthBucketRouting>(spec);
}

}  // namespace cpsim
