// The contention modes (sim/engine/contention.hpp) as policies behind one small interface that the executor consults
// (sim/engine/executor.cpp). A policy sees counts of flows in flight by traffic class, on a GPU pair or on a link, and
// answers three questions; the executor owns the engine, the FIFO of flows kept waiting and the link settings.
#pragma once
#include <array>
#include <memory>

#include "sim/engine/contention.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

using ClassCounts = std::array<int, kTrafficClasses>;  // flows per traffic class

class ContentionPolicy {
 public:
  virtual ~ContentionPolicy() = default;
  // Whether a ready flow of class `cls` may start, given the flows in flight on its sender and receiver and the
  // flows queued before it there. A flow not admitted waits (first come, first served) until a flow ends.
  virtual bool admits(Traffic cls, const ClassCounts& in_flight, const ClassCounts& queued_before) const;
  // Whether each traffic class should run on its own copy of the network (as if alone); where the platform cannot
  // be copied (XML), link_capacity_Bps stands in.
  virtual bool isolates_classes() const { return false; }
  // Whether link capacities follow the flows on them (then re-set whenever a flow starts or ends).
  virtual bool shapes_links() const { return false; }
  // Capacity of a link of `peak_Bps` carrying `on_link` flows per class.
  virtual double link_capacity_Bps(double peak_Bps, const ClassCounts& on_link) const;
  // Whether compute slows down with the flows touching its GPU (then re-timed whenever a flow starts or ends).
  virtual bool stretches_compute() const { return false; }
  // Factor on a compute kernel's rate of progress while `comm_kernels` flows touch its GPU.
  virtual double compute_stretch(int comm_kernels) const;
};

std::unique_ptr<ContentionPolicy> make_contention_policy(const ContentionSpec& spec, int sm_count);

}  // namespace cpsim
