#include "sim/serve/serve_simulation.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <queue>

#include "sim/scenario/units.hpp"

namespace cpsim {
namespace {

struct Event {
  double t_s;
  std::uint64_t seq;  // insertion order: ties resolve the same way every run
  int request;        // >= 0: an arrival
  int instance;       // an arrival: -1; else the instance whose iteration ends
  bool operator>(const Event& o) const { return t_s != o.t_s ? t_s > o.t_s : seq > o.seq; }
};

struct InstanceState {
  std::deque<int> queue;       // routed, not admitted
  std::deque<int> prefilling;  // admitted, prompt not finished
  std::vector<int> decoding;   // first token made, more to generate
  double kv_used_bytes = 0;
  double outstanding_tokens = 0;
  bool busy = false;
  StepRecord step;  // the iteration running
};

class Loop {
 public:
  Loop(const ServeSpec& spec, const std::vector<ServeInstance>& instances, const std::vector<Request>& requests,
       const std::vector<RequestPlan>& plans, const StepCostTable& costs)
      : spec_(spec), inst_(instances), req_(requests), plan_(plans), costs_(costs), state_(instances.size()),
        done_tokens_(requests.size(), 0) {
    run_.outcomes.resize(requests.size());
    run_.busy_s.assign(instances.size(), 0);
    for (std::size_t i = 0; i < requests.size(); ++i) push(requests[i].arrival_s, int(i), -1);
  }

  ServeRun run() {
    while (!events_.empty()) {
      const Event e = events_.top();
      if (spec_.max_time_s > 0 && e.t_s > spec_.max_time_s) break;
      events_.pop();
      run_.end_s = e.t_s;
      if (e.instance < 0) arrive(e.t_s, e.request);
      else end_iteration(e.t_s, e.instance);
    }
    return std::move(run_);
  }

 private:
  void push(double t_s, int request, int instance) { events_.push({t_s, seq_++, request, instance}); }

  void note_waiting(double t_s, int delta) {
    waiting_ += delta;
    if (!run_.waiting.empty() && run_.waiting.back().first == t_s) run_.waiting.back().second = waiting_;
    else run_.waiting.emplace_back(t_s, waiting_);
  }

  void refuse(int r, std::string reason) {
    run_.outcomes[r].status = RequestStatus::REFUSED;
    run_.outcomes[r].reason = std::move(reason);
  }

  void arrive(double t_s, int r) {
    const RequestPlan& p = plan_[r];
    int best = -1;
    for (std::size_t i = 0; i < inst_.size(); ++i)
      if (inst_[i].cls == p.cls && (best < 0 || state_[i].outstanding_tokens < state_[best].outstanding_tokens))
        best = int(i);
    run_.outcomes[r].instance = best;
    if (p.kv_bytes > inst_[best].kv_budget_bytes) {
      refuse(r, fmt::format("its KV cache needs {} per GPU; an empty cp {} instance has {} for KV",
                            format_bytes(p.kv_bytes), inst_[best].cp, format_bytes(inst_[best].kv_budget_bytes)));
      return;
    }
    InstanceState& s = state_[best];
    s.queue.push_back(r);
    s.outstanding_tokens += double(req_[r].prompt_tokens - req_[r].cached_tokens + req_[r].output_tokens);
    note_waiting(t_s, +1);
    start_iteration(t_s, best);
  }

  void admit(int i) {
    InstanceState& s = state_[i];
    while (!s.queue.empty() && int(s.prefilling.size() + s.decoding.size()) < inst_[i].max_batch) {
      const int r = s.queue.front();
      if (s.kv_used_bytes + plan_[r].kv_bytes <= inst_[i].kv_budget_bytes) {
        s.kv_used_bytes += plan_[r].kv_bytes;
        s.prefilling.push_back(r);
      } else if (spec_.refuse_when_full) {
        refuse(r, "on_kv_full: refuse, and the instance's KV budget was taken");
        s.outstanding_tokens -= double(req_[r].prompt_tokens - req_[r].cached_tokens + req_[r].output_tokens);
        note_waiting(run_.end_s, -1);
      } else {
        break;  // head of line: it waits for KV to be released
      }
      s.queue.pop_front();
    }
  }

  void start_iteration(double t_s, int i) {
    InstanceState& s = state_[i];
    if (s.busy) return;
    admit(i);
    const ServeInstance& in = inst_[i];
    StepRecord step;
    step.instance = i;
    step.start_s = t_s;
    double cost_s = 0;
    const bool chunked = spec_.chunk_tokens > 0;
    if (!s.decoding.empty() && (chunked || s.prefilling.empty())) {
      double context = 0;
      for (int r : s.decoding) context += double(req_[r].prompt_tokens + run_.outcomes[r].generated);
      step.decode_batch = int(s.decoding.size());
      step.mean_context = context / double(s.decoding.size());
      cost_s += costs_.decode_s(in.cp, spec_.decode_pass_q, step.decode_batch, step.mean_context);
    }
    if (!s.prefilling.empty()) {
      const int r = s.prefilling.front();
      const std::uint64_t remaining = req_[r].prompt_tokens - req_[r].cached_tokens - done_tokens_[r];
      const std::uint64_t chunk = chunked ? std::min(spec_.chunk_tokens, remaining) : remaining;
      step.prefill_request = r;
      step.prefill_tokens = chunk;
      cost_s += costs_.prefill_s(in.cp, plan_[r].pass_q, chunk, req_[r].cached_tokens + done_tokens_[r]);
      if (run_.outcomes[r].start_s < 0) {
        run_.outcomes[r].start_s = t_s;
        note_waiting(t_s, -1);
      }
    }
    if (step.decode_batch == 0 && step.prefill_request < 0) return;  // nothing to do: idle
    step.end_s = t_s + cost_s;
    s.busy = true;
    s.step = step;
    push(step.end_s, -1, i);
  }

  void finish(int i, int r, double t_s) {
    run_.outcomes[r].status = RequestStatus::DONE;
    run_.outcomes[r].finish_s = t_s;
    state_[i].kv_used_bytes -= plan_[r].kv_bytes;
  }

  void end_iteration(double t_s, int i) {
    InstanceState& s = state_[i];
    const StepRecord step = s.step;
    s.busy = false;
    run_.busy_s[i] += step.end_s - step.start_s;
    run_.steps.push_back(step);
    if (step.decode_batch > 0) {
      std::vector<int> still;
      for (int r : s.decoding) {
        RequestOutcome& o = run_.outcomes[r];
        ++o.generated;
        s.outstanding_tokens -= 1;
        if (o.generated == req_[r].output_tokens) finish(i, r, t_s);
        else still.push_back(r);
      }
      s.decoding.swap(still);
    }
    if (step.prefill_request >= 0) {
      const int r = step.prefill_request;
      done_tokens_[r] += step.prefill_tokens;
      s.outstanding_tokens -= double(step.prefill_tokens);
      if (done_tokens_[r] == req_[r].prompt_tokens - req_[r].cached_tokens) {
        s.prefilling.pop_front();
        RequestOutcome& o = run_.outcomes[r];
        o.first_token_s = t_s;
        o.generated = 1;
        s.outstanding_tokens -= 1;
        if (req_[r].output_tokens == 1) finish(i, r, t_s);
        else s.decoding.push_back(r);
      }
    }
    start_iteration(t_s, i);
  }

  const ServeSpec& spec_;
  const std::vector<ServeInstance>& inst_;
  const std::vector<Request>& req_;
  const std::vector<RequestPlan>& plan_;
  const StepCostTable& costs_;
  std::vector<InstanceState> state_;
  std::vector<std::uint64_t> done_tokens_;  // prompt tokens prefilled so far, per request
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::uint64_t seq_ = 0;
  int waiting_ = 0;
  ServeRun run_;
};

}  // namespace

std::vector<ServeInstance> place_instances(const ServeSpec& spec) {
  std::vector<ServeInstance> out;
  int gpu = 0;
  for (std::size_t c = 0; c < spec.classes.size(); ++c)
    for (int k = 0; k < spec.classes[c].count; ++k) {
      ServeInstance in;
      in.cls = int(c);
      in.cp = spec.classes[c].cp;
      in.tp = spec.tp;
      in.first_gpu = gpu;
      in.max_batch = spec.classes[c].max_batch > 0 ? spec.classes[c].max_batch : spec.max_batch;
      gpu += in.gpus();
      out.push_back(in);
    }
  return out;
}

void register_step_demands(StepCostTable& table, const ServeSpec& spec, const std::vector<Request>& requests,
                           const std::vector<RequestPlan>& plans) {
  struct Range {
    std::uint64_t min_context = UINT64_MAX, max_context = 0;
    int decoders = 0;
  };
  std::vector<Range> ranges(spec.classes.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    const int cp = spec.classes[plans[i].cls].cp;
    const std::uint64_t tokens = r.prompt_tokens - r.cached_tokens;
    if (spec.chunk_tokens == 0) {
      table.need_prefill(cp, plans[i].pass_q, tokens, r.cached_tokens);
    } else {
      for (std::uint64_t done = 0; done < tokens; done += spec.chunk_tokens)
        table.need_prefill(cp, plans[i].pass_q, std::min(spec.chunk_tokens, tokens - done), r.cached_tokens + done);
    }
    if (r.output_tokens < 2) continue;
    Range& g = ranges[plans[i].cls];
    g.min_context = std::min(g.min_context, r.prompt_tokens + 1);
    g.max_context = std::max(g.max_context, r.prompt_tokens + r.output_tokens - 1);
    ++g.decoders;
  }
  for (std::size_t c = 0; c < ranges.size(); ++c) {
    if (ranges[c].decoders == 0) continue;
    const int cap = spec.classes[c].max_batch > 0 ? spec.classes[c].max_batch : spec.max_batch;
    const int most = std::min(cap, ranges[c].decoders);
    for (int b = 1; b <= most; ++b)
      table.need_decode(spec.classes[c].cp, spec.decode_pass_q, b, ranges[c].min_context, ranges[c].max_context);
  }
}

ServeRun simulate_serving(const ServeSpec& spec, const std::vector<ServeInstance>& instances,
                          const std::vector<Request>& requests, const std::vector<RequestPlan>& plans,
                          const StepCostTable& costs) {
  return Loop(spec, instances, requests, plans, costs).run();
}

}  // namespace cpsim
