// The fast path's layer repetition (TaskGraph::repeats / repeat, workloads/layer_repetition.hpp): a copied layer
// must be exactly the layer the generator would have built, and a layer that is not the previous one moved must
// never be copied. Oracle: the same layers built by hand. End to end (every kind, phase and mode against
// --no-fast-path, byte-identical summaries) is tests/cli/fast_path_identical.sh.
#include <catch2/catch.hpp>

#include "workloads/layer_repetition.hpp"

using namespace cpsim;

namespace {
constexpr int kGpus = 4;  // TP groups (0,1) and (2,3)

// One layer: every GPU computes after its input, sends to its TP peer, and computes again once the peer's flow
// is in. `skew_s` lengthens GPU 1's second kernel; `anchor` (if set) is an extra prerequisite of every first kernel.
LayerRepetition::Ready layer(TaskGraph& g, int model_layer, const LayerRepetition::Ready& in, double skew_s = 0,
                             std::optional<TaskId> anchor = std::nullopt) {
  const int l = g.add_layer({AttentionKind::DENSE}, {CpAlgorithm::RING}, false, {model_layer, -1, -1, -1});
  std::vector<TaskId> first, flows;
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    first.push_back(g.add_compute(gpu, "qkv", l, -1, 1e-3, 1, 1));
    g.depend_all(first.back(), in[0][gpu]);
    if (anchor) g.depend(first.back(), *anchor);
  }
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    flows.push_back(g.add_flow(gpu, gpu ^ 1, 1e6, Traffic::TP, "tp", l, 0));
    g.depend(flows.back(), first[gpu]);
  }
  LayerRepetition::Ready out(1, RankTasks(kGpus));
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    out[0][gpu] = {g.add_compute(gpu, "o", l, -1, 2e-3 + (gpu == 1 ? skew_s : 0), 1, 1)};
    g.depend(out[0][gpu].front(), flows[gpu ^ 1]);
  }
  return out;
}

// `layers` layers, through LayerRepetition when `repeat` (else each built by hand); returns how many were copied.
// `backward`: model layers last to first, as a training backward pass builds them.
int build(TaskGraph& g, int layers, bool repeat, double second_layer_skew_s = 0, bool anchored = false,
          bool backward = false) {
  std::optional<TaskId> anchor;
  if (anchored) anchor = g.add_compute(0, "embedding", -1, -1, 1e-4, 1, 1);
  LayerRepetition rep(g, repeat, backward ? -1 : 1);
  LayerRepetition::Ready ready(1, RankTasks(kGpus));
  int copied = 0;
  for (int i = 0; i < layers; ++i) {
    const int l = backward ? layers - 1 - i : i;
    if (rep.copy("dense", ready)) {
      ++copied;
      continue;
    }
    rep.begin("dense", ready);
    ready = layer(g, l, ready, i == 1 ? second_layer_skew_s : 0, anchor);
    rep.end(ready);
  }
  return copied;
}

void require_same(const TaskGraph& a, const TaskGraph& b) {
  REQUIRE(a.task_count() == b.task_count());
  REQUIRE(a.dependency_count() == b.dependency_count());
  REQUIRE(a.flow_count() == b.flow_count());
  REQUIRE(a.layers().size() == b.layers().size());
  for (std::size_t i = 0; i < a.layers().size(); ++i) CHECK(a.layers()[i].place.model_layer == b.layers()[i].place.model_layer);
  for (TaskId id = 0; id < a.task_count(); ++id) {
    const Task &x = a.task(id), &y = b.task(id);
    CHECK(describe_task(a, id) == describe_task(b, id));
    CHECK(x.duration_s == y.duration_s);
    CHECK(x.predecessor_count == y.predecessor_count);
    const auto sx = a.successors(id), sy = b.successors(id);
    CHECK(std::vector<TaskId>(sx.begin(), sx.end()) == std::vector<TaskId>(sy.begin(), sy.end()));
  }
}
}  // namespace

TEST_CASE("layer repetition: copied layers equal the layers built by hand") {
  TaskGraph by_hand(kGpus), repeated(kGpus);
  build(by_hand, 6, false);
  // Layer 0 waits for nothing, so layer 1 (which waits for layer 0) is not it moved; layer 2 is seen to be layer 1
  // moved, so 3..5 are copies.
  CHECK(build(repeated, 6, true) == 3);
  CHECK(repeated.repeated_tasks() == 3 * 12);
  require_same(by_hand, repeated);
}

TEST_CASE("layer repetition: a backward pass (model layers last to first) copies its layers moved down") {
  TaskGraph by_hand(kGpus), repeated(kGpus);
  build(by_hand, 6, false, 0, false, true);
  // Model layers 5, 4 and 3 are built; 3 is seen to be 4 moved down a layer, so 2, 1 and 0 are copies.
  CHECK(build(repeated, 6, true, 0, false, true) == 3);
  require_same(by_hand, repeated);  // model layers 5, 4, ..., 0 in the copies' LayerInfo too
  CHECK(repeated.layers().back().place.model_layer == 0);
}

// A forward pass, then a backward pass from its outputs (its first layers wait on the forward's copied layers), then
// a tail kernel on every GPU after the backward's copies: a graph mixing stored tasks and copies both ways.
int forward_then_backward(TaskGraph& g, int layers, bool repeat) {
  int copied = 0;
  LayerRepetition::Ready ready(1, RankTasks(kGpus));
  for (int pass = 0; pass < 2; ++pass) {
    LayerRepetition rep(g, repeat, pass == 0 ? 1 : -1);
    const std::string key = pass == 0 ? "forward" : "backward";
    for (int i = 0; i < layers; ++i) {
      if (rep.copy(key, ready)) {
        ++copied;
        continue;
      }
      rep.begin(key, ready);
      ready = layer(g, pass == 0 ? i : layers - 1 - i, ready);
      rep.end(ready);
    }
  }
  for (int gpu = 0; gpu < kGpus; ++gpu) g.depend_all(g.add_compute(gpu, "tail", -1, -1, 1e-4, 1, 1), ready[0][gpu]);
  return copied;
}

TEST_CASE("layer repetition: stored tasks after copies, and copies after stored tasks, equal a graph built by hand") {
  TaskGraph by_hand(kGpus), repeated(kGpus);
  forward_then_backward(by_hand, 5, false);
  // Forward: layer 0 waits on nothing, so 1 is not 0 moved; 2 is 1 moved: 3 and 4 are copies. Backward: its first
  // layer waits on the forward's last, so its second is the first moved: its last 3 are copies.
  CHECK(forward_then_backward(repeated, 5, true) == 5);
  require_same(by_hand, repeated);
  repeated.seal();  // the successor index alone, edges dropped: the same successors
  require_same(by_hand, repeated);
  CHECK(repeated.dependency_count() == by_hand.dependency_count());
  CHECK_THROWS_AS(repeated.add_compute(0, "late", -1, -1, 1, 1, 1), std::logic_error);  // sealed
}

TEST_CASE("layer repetition: copied layers equal the layers built by hand, collapsed") {
  TaskGraph by_hand(kGpus), repeated(kGpus);
  by_hand.collapse_by(RankSymmetry(2, kGpus));
  repeated.collapse_by(RankSymmetry(2, kGpus));
  build(by_hand, 5, false);
  CHECK(build(repeated, 5, true) == 2);
  REQUIRE(by_hand.finish_collapse(nullptr));
  REQUIRE(repeated.finish_collapse(nullptr));
  CHECK(repeated.task_count() == 5 * 6);  // 2 representatives x 3 tasks per layer
  require_same(by_hand, repeated);
}

TEST_CASE("layer repetition: a layer that is not the one before moved is never copied") {
  TaskGraph skewed(kGpus);
  // Layer 1's GPU 1 runs a longer kernel: layer 1 is not layer 0 moved, so layer 2 is built, and so on.
  // Layer 2 is built (it is not layer 1 moved either), layer 3 is built and seen to be 2 moved, layer 4 is copied.
  CHECK(build(skewed, 5, true, 1e-6) == 1);
  TaskGraph anchored(kGpus);
  // Every layer waits for one task before the first layer: layer 1's prerequisite is not layer 0's moved.
  CHECK(build(anchored, 4, true, 0, true) == 0);
  TaskGraph by_hand(kGpus);
  build(by_hand, 4, false, 0, true);
  require_same(by_hand, anchored);
  TaskGraph off(kGpus);
  CHECK(build(off, 4, false) == 0);  // run.fast_path: false builds every layer
}

TEST_CASE("layer repetition: a collapsed layer whose GPUs differ is never copied") {
  TaskGraph g(kGpus);
  g.collapse_by(RankSymmetry(2, kGpus));
  // GPU 1 differs from its representative in layer 1, so neither layer is verified and every layer is built;
  // finish_collapse then refuses the collapse (the builder rebuilds whole).
  CHECK(build(g, 4, true, 1e-6) == 0);
  CHECK_FALSE(g.finish_collapse(nullptr));
}
