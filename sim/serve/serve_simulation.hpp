// The request-level simulation of a serving run (docs/serving.md, "The scheduler"): an event loop over request
// arrivals and instance iterations, each iteration's time taken from the step-cost table.
//   routing:    a request's class comes from the routing policy; within the class it goes to the instance with the
//               fewest outstanding tokens (prompt tokens not yet prefilled plus output tokens not yet generated),
//               the lowest index on a tie;
//   admission:  FIFO per instance; a request is admitted when its KV (prompt + output, reserved whole, no
//               preemption) fits the instance's KV budget beside the admitted ones and fewer than max_batch
//               requests are admitted; otherwise it waits (on_kv_full: wait) or is refused (refuse). A request
//               whose KV exceeds an empty instance's budget is refused at arrival;
//   iterations: without chunking, a waiting prefill runs alone and whole (prefills first, as vLLM schedules them),
//               else one decode step of every admitted request (continuous batching); with chunk_tokens C, each
//               iteration runs one decode step of the decoding requests plus a chunk of up to C tokens of the first
//               prefilling request, costed as the sum of the two steps (no fusion gain is modelled).
// The prefill makes the first output token; each decode step one more per request.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/serve/request_source.hpp"
#include "sim/serve/serve_spec.hpp"
#include "sim/serve/step_costs.hpp"

namespace cpsim {

struct ServeInstance {
  int cls = 0, cp = 1, tp = 1;
  int first_gpu = 0;           // GPUs first_gpu .. first_gpu + cp * tp - 1
  double kv_budget_bytes = 0;  // per GPU (instance_model.hpp)
  int max_batch = 64;          // requests admitted at once (its class's, else serve.scheduler.max_batch)
  int gpus() const { return cp * tp; }
};

// What the policies and the memory model decided for one request before the clock starts.
struct RequestPlan {
  int cls = 0;
  bool pass_q = false;  // its prefill passes Q (else KV)
  double kv_bytes = 0;  // per GPU of its instance: prompt + output tokens
};

enum class RequestStatus { DONE, REFUSED, UNFINISHED };

struct RequestOutcome {
  RequestStatus status = RequestStatus::UNFINISHED;
  std::string reason;  // why it was refused
  int instance = -1;
  double start_s = -1, first_token_s = -1, finish_s = -1;  // start: its prefill's first iteration
  std::uint64_t generated = 0;
};

struct StepRecord {
  int instance = 0;
  double start_s = 0, end_s = 0;
  int prefill_request = -1;       // the request whose prompt (or chunk) ran, -1 for none
  std::uint64_t prefill_tokens = 0;
  int decode_batch = 0;
  double mean_context = 0;        // of the decode batch
};

struct ServeRun {
  std::vector<RequestOutcome> outcomes;  // by position in the request list
  std::vector<StepRecord> steps;
  std::vector<double> busy_s;            // per instance
  std::vector<std::pair<double, int>> waiting;  // (t_s, requests arrived whose prefill has not started) at each change
  double end_s = 0;                      // the last event
};

// Instances on consecutive GPU blocks, in class order (budgets filled by the caller).
std::vector<ServeInstance> place_instances(const ServeSpec& spec);

// Registers in `table` every grid shape the run may look up.
void register_step_demands(StepCostTable& table, const ServeSpec& spec, const std::vector<Request>& requests,
                           const std::vector<RequestPlan>& plans);

ServeRun simulate_serving(const ServeSpec& spec, const std::vector<ServeInstance>& instances,
                          const std::vector<Request>& requests, const std::vector<RequestPlan>& plans,
                          const StepCostTable& costs);

}  // namespace cpsim
