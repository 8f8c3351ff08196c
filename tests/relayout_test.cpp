// Re-layout between layer kinds of different token layouts (workloads/relayout.hpp): linear layers split the
// sequence contiguously, dense layers here zigzag, so the hidden states cross an all-to-all where they meet.
// Llama-3-8B's shape as a 3:1 linear/softmax hybrid, S = 32K on 4 GPUs of one node, the ideal machine.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/attention/partition.hpp"
#include "workloads/relayout.hpp"

using namespace cpsim;

namespace {
const std::vector<std::string> kHybrid{"model=models/linear-hybrid-8b.yaml", "model.layers=8",
                                       "cp.linear.algorithm=lasp2", "cp.dense.partition=zigzag"};
// Oracle: contiguous rank i holds zigzag chunks 2i and 2i+1 (c = S/8 tokens each); zigzag rank j holds chunks j and
// 7-j. Zigzag ranks 1 and 3 get both chunks from other ranks (0 and 3; 1 and 2): 2c = S/4 tokens of d_model x 2 B.
constexpr double kMostReceived = 32768.0 / 4 * 4096 * 2;
}  // namespace

TEST_CASE("shared_tokens: the layouts' intersections", "[relayout]") {
  const std::uint64_t s = 64;  // N = 4: contiguous runs of 16, zigzag chunks of 8
  CHECK(shared_tokens(Partition::CONTIGUOUS, 0, Partition::ZIGZAG, 0, s, 4) == 8);  // chunk 0
  CHECK(shared_tokens(Partition::CONTIGUOUS, 3, Partition::ZIGZAG, 0, s, 4) == 8);  // chunk 7
  CHECK(shared_tokens(Partition::CONTIGUOUS, 1, Partition::ZIGZAG, 0, s, 4) == 0);
  CHECK(shared_tokens(Partition::CONTIGUOUS, 2, Partition::STRIPED, 1, s, 4) == 4);  // 33, 37, 41, 45 of [32, 48)
  CHECK(shared_tokens(Partition::STRIPED, 1, Partition::ZIGZAG, 3, s, 4) == 4);     // 25, 29 and 33, 37
  CHECK(shared_tokens(Partition::STRIPED, 2, Partition::STRIPED, 2, s, 4) == 16);
  for (Partition a : {Partition::CONTIGUOUS, Partition::ZIGZAG, Partition::STRIPED})
    for (Partition b : {Partition::CONTIGUOUS, Partition::ZIGZAG, Partition::STRIPED})
      for (int i = 0; i < 4; ++i) {  // every token of rank i under a lands on some rank under b
        double total = 0;
        for (int j = 0; j < 4; ++j) total += shared_tokens(a, i, b, j, s, 4);
        CHECK(total == 16);
      }
}

TEST_CASE("re-layout prefill: an all-to-all where linear and dense layers meet, bytes exact", "[relayout]") {
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario, kHybrid));
  int relayouts = 0;
  for (const LayerMetrics& l : r.metrics.layers) {
    const int model_layer = l.info.place.model_layer;
    const bool boundary = model_layer % 4 == 3 || (model_layer > 0 && model_layer % 4 == 0);  // dense, or after it
    CHECK((l.relayout_bytes > 0) == boundary);
    if (!boundary) continue;
    ++relayouts;
    CHECK(l.relayout_bytes == kMostReceived);
    CHECK(l.relayout_formula_bytes == kMostReceived);
  }
  CHECK(relayouts == 3);  // layers 3, 4, 7
  // The kinds' own volumes are unchanged by the re-layout.
  for (const VolumeRow& v : r.metrics.volumes) CHECK(v.formula_bytes == v.simulated_bytes);
}

TEST_CASE("re-layout training: the backward returns the gradients to the previous layout", "[relayout]") {
  auto o = kHybrid;
  o.push_back("run.phase=train");
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario, o));
  int backward = 0;
  for (const LayerMetrics& l : r.metrics.layers)
    if (l.info.backward && l.relayout_bytes > 0) {
      ++backward;
      CHECK(l.relayout_bytes == kMostReceived);  // the same exchange, reversed: the counts are symmetric here
      CHECK(l.relayout_formula_bytes == kMostReceived);
    }
  CHECK(backward == 3);
}
