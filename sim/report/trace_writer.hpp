// Writes the simulated timeline as a Chrome JSON trace for Perfetto (../shared/research/perfetto-trace.md):
//   - one process per GPU, "node<N> gpu<L> (cp<c> tp<t>)", sorted by global GPU id;
//   - threads: "layers" (one slice per layer), "compute" (kernels), and per traffic class "<cls> send" / "<cls> recv"
//     lanes (extra lanes "<cls> send 2", ... only when transfers of one GPU overlap);
//   - a send slice spans a flow's whole life on the sender; the receive slice starts when the first byte can arrive
//     (start + route latency) and a flow arrow joins the two;
//   - link utilisation counters, one per directed link that carried traffic, from each flow's mean rate over its
//     transfer phase (exact when links are not shared), grouped per node ("node<k> links": its NVLink ports and
//     NICs) and the rest (switches, spines, XML-named links) under "fabric links";
//   - per GPU, a "memory" counter (GiB) from its memory timeline (sim/engine/memory_timeline.hpp), when one is given.
// Timestamps are integer nanoseconds printed as microseconds with three decimals.
#pragma once
#include <cstddef>
#include <ostream>

#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/memory_timeline.hpp"
#include "sim/scenario/scenario.hpp"

namespace cpsim {

struct TraceStats {
  std::size_t slices = 0;
  std::size_t flows = 0;
  std::size_t counter_tracks = 0;
  std::size_t processes = 0;
};

TraceStats write_trace(std::ostream& out, const Scenario& s, const TaskGraph& g, const ExecutionResult& r,
                       const std::vector<MemoryTimeline>* memory = nullptr);

}  // namespace cpsim
