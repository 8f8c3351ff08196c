// Memory verdicts (workloads/memory.hpp): a GPU's need against its HBM, the overflow, the largest term, and
// run.on_oom. Oracles: byte sums written beside each check.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "workloads/memory.hpp"

using namespace cpsim;

TEST_CASE("memory verdict: fits, overflow and the largest term", "[memory]") {
  MemoryBreakdown m;
  m.weights_bytes = 30e9;
  m.kv_cache_bytes = 50e9;
  m.activations_bytes = 10e9;
  const MemoryVerdict over = memory_verdict(m, 80e9);
  CHECK(over.need_bytes == 90e9);      // 30 + 50 + 10 GB
  CHECK_FALSE(over.fits);
  CHECK(over.overflow_bytes == 10e9);  // 90 - 80 GB
  CHECK(over.largest_term == "kv_cache");
  CHECK(over.largest_term_bytes == 50e9);
  const MemoryVerdict fits = memory_verdict(m, 90e9);  // exactly the capacity fits
  CHECK(fits.fits);
  CHECK(fits.overflow_bytes == 0);
}

TEST_CASE("memory verdict: run.on_oom error refuses a plan that does not fit, located at the key", "[memory]") {
  // Llama-3-8B at 32K on CP4 fits an 80 GB H100; at 8M tokens each GPU caches 2M tokens of KV for 32 layers:
  // 32 x 2,097,152 x 2 x 1024 x 2 B = 256 GiB, the largest term, past 80 GB = 74.51 GiB.
  const Scenario ok = test::scenario_from(test::kSmallScenario, {"run.on_oom=error"});
  CHECK(memory_verdict(prefill_memory(test::inputs_of(ok)), ok.platform.gpu.hbm_bytes).fits);
  CHECK_THROWS_WITH(test::scenario_from(test::kSmallScenario, {"run.on_oom=error", "run.seq_len=8M"}),
                    Catch::StartsWith("--set:1:1: run.on_oom: a GPU needs") &&
                        Catch::Contains("of 74.51 GiB HBM") && Catch::Contains("largest term: kv_cache 256.00 GiB"));
  // warn (the default) loads the same plan; the summary flags it.
  const Scenario warned = test::scenario_from(test::kSmallScenario, {"run.seq_len=8M"});
  CHECK_FALSE(memory_verdict(prefill_memory(test::inputs_of(warned)), warned.platform.gpu.hbm_bytes).fits);
}
