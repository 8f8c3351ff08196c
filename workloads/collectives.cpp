#include "workloads/collectives.hpp"

namespace cpsim {

RankTasks ring_allreduce(TaskGraph& g, const std::vector<int>& gpus, double bytes, const CollectiveTag& tag,
                         const RankTasks& ready) {
  const int n = static_cast<int>(gpus.size());
  if (n == 1) return ready;
  const double chunk = bytes / n;
  // sent[r] = the flow rank r sent in the previous step.
  std::vector<TaskId> sent(n);
  for (int step = 0; step < 2 * (n - 1); ++step) {
    std::vector<TaskId> now(n);
    for (int r = 0; r < n; ++r) {
      const int right = (r + 1) % n;
      now[r] = g.add_flow(gpus[r], gpus[right], chunk, tag.traffic, tag.name, tag.layer, step);
      if (step == 0) {
        g.depend_all(now[r], ready[r]);
        g.depend_all(now[r], ready[right]);
      } else {
        g.depend(now[r], sent[(r + n - 1) % n]);  // forward what arrived from the left
        g.depend(now[r], sent[r]);                // the comm stream is serial
        g.depend(now[r], sent[right]);            // the receiver has finished the previous step
      }
    }
    sent = now;
  }
  RankTasks done(n);
  for (int r = 0; r < n; ++r) done[r] = {sent[(r + n - 1) % n], sent[r]};
  return done;
}

}  // namespace cpsim
