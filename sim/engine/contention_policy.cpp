#include "sim/engine/contention_policy.hpp"

namespace cpsim {

bool ContentionPolicy::admits(Traffic, const ClassCounts&, const ClassCounts&) const { return true; }
double ContentionPolicy::link_capacity_Bps(double peak_Bps, const ClassCounts&) const { return peak_Bps; }
double ContentionPolicy::compute_stretch(int) const { return 1.0; }

namespace {

// Comm kernels behind some flows: one per traffic class with flows in flight (each class is its own NCCL
// communicator on its own stream, however many channels and peers its collective has).
int comm_kernels(const ClassCounts& c) {
  int n = 0;
  for (int v : c) n += v > 0;
  return n;
}

bool other_class(Traffic cls, const ClassCounts& c) {
  for (int k = 0; k < kTrafficClasses; ++k)
    if (k != int(cls) && c[k] > 0) return true;
  return false;
}

// fair: SimGrid's max-min sharing of the physical links, nothing to add.
class FairPolicy : public ContentionPolicy {};

// exclusive (Megatron): a flow starts only when no flow of another class is in flight on, or waiting for, its GPUs.
class ExclusivePolicy : public ContentionPolicy {
 public:
  bool admits(Traffic cls, const ClassCounts& in_flight, const ClassCounts& queued_before) const override {
    return !other_class(cls, in_flight) && !other_class(cls, queued_before);
  }
};

// staggered (Helix, ideal): each class runs as if alone: on its own copy of the network, or (XML platforms) each
// class keeps the whole link: k classes on a link get k times its capacity.
class StaggeredPolicy : public ContentionPolicy {
 public:
  bool isolates_classes() const override { return true; }
  bool shapes_links() const override { return true; }
  double link_capacity_Bps(double peak_Bps, const ClassCounts& on_link) const override {
    int classes = 0;
    for (int v : on_link) classes += v > 0;
    return peak_Bps * std::max(1, classes);
  }
};

// subtractive (Lagom): every comm kernel consumes V(NC, C) of the links it uses and NC SMs of its GPUs.
class SubtractivePolicy : public ContentionPolicy {
 public:
  SubtractivePolicy(const ContentionSpec& spec, int sm_count) : spec_(spec), sm_count_(sm_count) {}
  bool shapes_links() const override { return true; }
  double link_capacity_Bps(double peak_Bps, const ClassCounts& on_link) const override {
    return spec_.subtractive_link_Bps(peak_Bps, comm_kernels(on_link));
  }
  bool stretches_compute() const override { return true; }
  double compute_stretch(int comm_kernels) const override { return spec_.compute_stretch(sm_count_, comm_kernels); }

 private:
  ContentionSpec spec_;
  int sm_count_;
};

}  // namespace

std::unique_ptr<ContentionPolicy> make_contention_policy(const ContentionSpec& spec, int sm_count) {
  switch (spec.mode) {
    case ContentionMode::EXCLUSIVE: return std::make_unique<ExclusivePolicy>();
    case ContentionMode::STAGGERED: return std::make_unique<StaggeredPolicy>();
    case ContentionMode::SUBTRACTIVE: return std::make_unique<SubtractivePolicy>(spec, sm_count);
    default: return std::make_unique<FairPolicy>();
  }
}

}  // namespace cpsim
