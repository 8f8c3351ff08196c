// Serving (sim/serve/): the scheduler's TTFT / TPOT against a hand derivation from the per-step costs, the grid and
// its interpolation, the policies, and the seeded request source.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/serve/request_source.hpp"
#include "sim/serve/serve_policy.hpp"
#include "sim/serve/serve_report.hpp"
#include "sim/serve/serve_simulation.hpp"
#include "sim/serve/step_costs.hpp"

using namespace cpsim;

namespace {

// One cp-1 instance; step costs by hand: prefill 4K = 0.1 s, 8K = 0.3 s; decode 0.01 s for one request, 0.012 s for
// two, whatever the context.
struct ThreeRequests {
  ServeSpec spec;
  std::vector<Request> requests;
  std::vector<RequestPlan> plans;
  std::vector<ServeInstance> instances;
  StepCostTable costs;
  ThreeRequests() {
    spec.classes = {InstanceClass{1, 1, 0, 0, ""}};
    spec.max_batch = 8;
    requests = {{0, 0.0, 4096, 0, 3}, {1, 0.01, 4096, 0, 2}, {2, 1.0, 8192, 0, 1}};
    plans.assign(3, RequestPlan{0, false, 1.0});
    instances = place_instances(spec);
    instances[0].kv_budget_bytes = 10;
    register_step_demands(costs, spec, requests, plans);
    for (const StepShape& s : costs.missing())
      costs.set(s, s.kind == StepShape::Kind::PREFILL ? (s.tokens == 4096 ? 0.1 : 0.3) : (s.batch == 1 ? 0.01 : 0.012));
  }
};

}  // namespace

TEST_CASE("serve: three requests' TTFT and TPOT equal the hand derivation from the step costs") {
  ThreeRequests t;
  const ServeRun run = simulate_serving(t.spec, t.instances, t.requests, t.plans, t.costs);
  // Oracle, by hand: r0 prefills 0 -> 0.1 (first token 0.1); r1 (arrived 0.01) prefills 0.1 -> 0.2 (prefills go
  // first); then one decode of both, 0.2 -> 0.212 (r1's 2nd and last token); r0 alone 0.212 -> 0.222 (its 3rd);
  // r2 arrives at 1.0 to an idle instance, prefills 1.0 -> 1.3, one output token: done at its first token.
  REQUIRE(run.outcomes.size() == 3);
  CHECK(run.outcomes[0].first_token_s == Approx(0.1).epsilon(1e-12));
  CHECK(run.outcomes[0].finish_s == Approx(0.222).epsilon(1e-12));
  CHECK(run.outcomes[1].start_s == Approx(0.1).epsilon(1e-12));
  CHECK(run.outcomes[1].first_token_s == Approx(0.2).epsilon(1e-12));
  CHECK(run.outcomes[1].finish_s == Approx(0.212).epsilon(1e-12));
  CHECK(run.outcomes[2].first_token_s == Approx(1.3).epsilon(1e-12));
  CHECK(run.outcomes[2].finish_s == Approx(1.3).epsilon(1e-12));
  // TTFT = first token - arrival: 0.1, 0.19, 0.3; TPOT = (finish - first token) / (outputs - 1): r0 0.122 / 2.
  CHECK(run.outcomes[1].first_token_s - t.requests[1].arrival_s == Approx(0.19).epsilon(1e-12));
  CHECK((run.outcomes[0].finish_s - run.outcomes[0].first_token_s) / 2 == Approx(0.061).epsilon(1e-12));
  CHECK((run.outcomes[1].finish_s - run.outcomes[1].first_token_s) / 1 == Approx(0.012).epsilon(1e-12));
  // Five iterations: two prefills, two decodes, one prefill; busy 0.222 + 0.3 s.
  CHECK(run.steps.size() == 5);
  CHECK(run.busy_s[0] == Approx(0.522).epsilon(1e-12));
}

TEST_CASE("serve: chunked prefill runs chunks beside the decode batch, costed as the sum") {
  ThreeRequests t;
  t.spec.chunk_tokens = 2048;
  StepCostTable costs;
  register_step_demands(costs, t.spec, t.requests, t.plans);
  // Oracle: every 2K chunk costs 0.05 s whatever its cached prefix; decode 0.01 s for one request.
  for (const StepShape& s : costs.missing()) costs.set(s, s.kind == StepShape::Kind::PREFILL ? 0.05 : 0.01);
  const ServeRun run = simulate_serving(t.spec, t.instances, t.requests, t.plans, costs);
  // r0: chunks 0 -> 0.05 -> 0.1 (first token 0.1). r1 then chunks beside r0's decode: 0.1 -> 0.16 (0.05 + 0.01),
  // 0.16 -> 0.22 (r1's first token; r0's 2nd and 3rd tokens at 0.16 and 0.22: r0 done at 0.22).
  CHECK(run.outcomes[0].first_token_s == Approx(0.1).epsilon(1e-12));
  CHECK(run.outcomes[0].finish_s == Approx(0.22).epsilon(1e-12));
  CHECK(run.outcomes[1].first_token_s == Approx(0.22).epsilon(1e-12));
}

TEST_CASE("serve: KV admission makes a request wait for memory, or refuses one that can never fit") {
  ThreeRequests t;
  t.plans[1].kv_bytes = 9.5;  // r0 holds 1 of the 10-byte budget: r1 waits until r0 releases it
  t.plans[2].kv_bytes = 11;   // more than an empty instance has: refused at arrival
  const ServeRun run = simulate_serving(t.spec, t.instances, t.requests, t.plans, t.costs);
  // Oracle: r0 alone: prefill 0 -> 0.1, decodes 0.1 -> 0.11 -> 0.12 (done); then r1 prefills 0.12 -> 0.22.
  CHECK(run.outcomes[0].finish_s == Approx(0.12).epsilon(1e-12));
  CHECK(run.outcomes[1].start_s == Approx(0.12).epsilon(1e-12));
  CHECK(run.outcomes[2].status == RequestStatus::REFUSED);
}

TEST_CASE("serve: grid brackets and interpolation") {
  // Oracle: prefill grid u * 2^(k/2) rounded up to u = 128: 4096 and 5888 (5792.6 -> 46 x 128) bracket 5000.
  const auto b = StepCostTable::prefill_bracket(1, 5000);
  CHECK(b.lo == 4096);
  CHECK(b.hi == 5888);
  CHECK(StepCostTable::grid_unit(3) == 384);  // lcm(128, 6)
  StepCostTable t;
  t.need_prefill(1, false, 5000, 0);
  for (const StepShape& s : t.missing()) t.set(s, s.tokens == 4096 ? 1.0 : 2.0);
  CHECK(t.prefill_s(1, false, 5000, 0) == Approx(1.0 + (5000.0 - 4096) / (5888 - 4096)).epsilon(1e-12));
  CHECK(t.prefill_s(1, false, 4096, 0) == 1.0);  // on the grid: exactly the simulated cost
}

TEST_CASE("serve: length buckets route by prompt, by-miss-rate passes Q below the threshold") {
  ServeSpec spec;
  spec.policy = ServePolicy::LENGTH_BUCKETS;
  spec.classes = {InstanceClass{1, 2, 65536, 0, ""}, InstanceClass{4, 1, 0, 0, ""}};
  const auto routing = make_routing(spec);
  CHECK(routing->instance_class({0, 0, 65536, 0, 1}) == 0);   // at the bound: the short bucket
  CHECK(routing->instance_class({0, 0, 65537, 0, 1}) == 1);
  spec.prefill_algorithm = PrefillAlgorithm::BY_MISS_RATE;
  // Oracle: miss rate = new / prompt: 4000 / 100000 = 0.04 < 0.05 -> pass-Q; 6000 / 100000 -> pass-KV.
  CHECK(prefill_passes_q(spec, {0, 0, 100000, 96000, 1}, 4));
  CHECK_FALSE(prefill_passes_q(spec, {0, 0, 100000, 94000, 1}, 4));
  CHECK_FALSE(prefill_passes_q(spec, {0, 0, 100000, 96000, 1}, 1));  // one GPU group passes nothing
}

TEST_CASE("serve: the request source is seeded and its rates and weights are as asked") {
  RequestSourceSpec src;
  src.rate_per_s = 2;
  src.requests = 20000;
  src.prompt_tokens.kind = LengthDistribution::Kind::CHOICE;
  src.prompt_tokens.values = {4096, 1 << 20};
  src.prompt_tokens.weights = {0.9, 0.1};
  src.output_tokens.values = {128};
  src.cached_tokens.values = {0};
  const auto a = make_requests(src), b = make_requests(src);
  REQUIRE(a.size() == 20000);
  CHECK(a[123].arrival_s == b[123].arrival_s);  // same seed, same requests
  // Oracle: mean gap 1 / rate = 0.5 s, share of long prompts 0.1: within 3 standard errors of 20,000 draws.
  CHECK(a.back().arrival_s / 20000 == Approx(0.5).epsilon(0.03));
  int longs = 0;
  for (const Request& r : a) longs += r.prompt_tokens == (1u << 20);
  CHECK(longs / 20000.0 == Approx(0.1).epsilon(0.07));
  std::vector<double> v{5, 1, 4, 2, 3};
  CHECK(percentile(v, 50) == 3);  // nearest rank: ceil(0.5 x 5) = 3rd smallest
  CHECK(percentile(v, 99) == 5);
}

TEST_CASE("serve: gamma arrivals keep the mean gap and spread it by cv") {
  RequestSourceSpec src;
  src.arrivals = RequestSourceSpec::Arrivals::GAMMA;
  src.rate_per_s = 4;
  src.cv = 2;
  src.requests = 20000;
  src.prompt_tokens.values = {4096};
  src.output_tokens.values = {16};
  src.cached_tokens.values = {0};
  const auto a = make_requests(src);
  double sum = 0, sq = 0, prev = 0;
  for (const Request& r : a) {
    const double gap = r.arrival_s - prev;
    prev = r.arrival_s;
    sum += gap;
    sq += gap * gap;
  }
  const double mean = sum / double(a.size()), sd = std::sqrt(sq / double(a.size()) - mean * mean);
  // Oracle: gamma with shape 1 / cv^2 scaled to mean 1 / rate: mean 0.25 s, standard deviation cv x mean = 0.5 s.
  CHECK(mean == Approx(0.25).epsilon(0.05));
  CHECK(sd / mean == Approx(2.0).epsilon(0.1));
}
