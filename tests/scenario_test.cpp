// Scenario loading: presets, units, --set overrides (model keys included) and located errors.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "sim/scenario/yaml_reader.hpp"

using namespace cpsim;

TEST_CASE("scenario: quickstart resolves presets and units", "[scenario]") {
  const Scenario s = load_scenario(std::string(CPSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  CHECK(s.platform.gpu_count() == 8);
  CHECK(s.platform.nvlink_bw_Bps == 450e9);  // hgx-h100: 450GBps
  CHECK(s.platform.nic_bw_Bps == 50e9);       // 400 Gb/s NDR
  CHECK(s.platform.gpu.bf16_flops == 989e12);
  CHECK(s.run.seq_len == 131072);             // 128K = 128 * 1024
  CHECK(s.model.d_kv() == 1024);              // Llama-3-8B: 8 KV heads * 128
}

TEST_CASE("scenario: --set overrides reach model files and platform units", "[scenario]") {
  const Scenario s = test::scenario_from(test::kSmallScenario,
                                         {"model.layers=2", "run.seq_len=1M", "platform.nic_bw=400Gbps", "parallel.cp=8"});
  CHECK(s.model.layers == 2);
  CHECK(s.run.seq_len == 1048576);
  CHECK(s.platform.nic_bw_Bps == 50e9);  // 400 Gb/s / 8
  CHECK(s.parallel.cp == 8);
}

TEST_CASE("scenario: errors name the file, line, column and key", "[scenario][errors]") {
  const std::string file = test::write_temp(test::kSmallScenario, "bad.yaml");
  // parallel.cp sits on line 6 of kSmallScenario (line 1 is empty), value at column 12.
  REQUIRE_THROWS_WITH(load_scenario(file, {"parallel.cp=64"}),
                      "--set:1:1: parallel.cp: cp x tp = 64 x 1 = 64 GPUs, but the platform has 8");
  REQUIRE_THROWS_WITH(load_scenario(file, {"parallel.cp=abc"}), "--set:1:1: parallel.cp: expected an integer, got 'abc'");
  REQUIRE_THROWS_WITH(load_scenario(file, {"run.batch=0"}), "--set:1:1: run.batch: must be at least 1, got 0");
  REQUIRE_THROWS_WITH(load_scenario(file, {"parallel.cp"}), "--set:1:1: parallel.cp: expected key.path=value");
  const std::string bad = test::write_temp("name: x\nplatform: {preset: hgx-h100}\nmodel: models/llama3-8b.yaml\n"
                                           "run: {seq_len: 8K, color: blue}\n", "bad2.yaml");
  REQUIRE_THROWS_WITH(load_scenario(bad), bad + ":4:20: run.color: unknown key");
}
