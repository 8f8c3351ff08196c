// Sweeps: axes from the scenario's sweep block and --axis, the order of points, shards, the CSV/JSON record and the
// merge of shards (which must reproduce the unsharded files byte for byte).
#include <catch2/catch.hpp>
#include <cstring>
#include <fmt/format.h>

#include "support.hpp"
#include "sim/sweep/sweep_metrics.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "sim/scenario/yaml_reader.hpp"

using namespace cpsim;

namespace {

// Line numbers matter below: the sweep block starts on line 5.
const std::string kBase = "name: t\n"
                          "platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8, calibration: ideal}\n"
                          "model: models/llama3-8b.yaml\n"
                          "run: {seq_len: 32K}\n";

std::vector<SweepAxis> axes_of(const std::string& sweep_block) {
  const std::string file = test::write_temp(kBase + sweep_block, "sweep.yaml");
  const YAML::Node root = load_yaml_file(file);
  const YamlSource source{file, {}};
  MapReader top(root, source, "");
  return read_sweep_block(top);
}

SweepRecord sample_record() {
  SweepRecord r;
  r.scenario = "scenarios/x.yaml";
  r.overrides = {"model.layers=2"};
  r.axes = {{"parallel.cp", {"2", "4", "8"}}, {"run.seq_len", {"32K", "64K"}}};
  for (std::size_t i = 0; i < point_count(r.axes); ++i) {
    SweepPoint p{i, point_values(r.axes, i), "ok", "", nlohmann::ordered_json::object()};
    p.metrics["makespan_s"] = 0.1 + 0.2 * static_cast<double>(i);  // doubles without a short exact form
    if (i % 2 == 0) p.metrics["cp_bytes_per_layer.dense"] = 1000 * i;
    if (i == 3) {
      p.status = "invalid";
      p.error = "--set:1:1: parallel.cp: cp x tp = 8 x 1 = 8 GPUs, but the platform has 4";
      p.metrics = nlohmann::ordered_json::object();
    }
    r.points.push_back(p);
  }
  return r;
}

}  // namespace

TEST_CASE("sweep: points are the row-major product of the axes", "[sweep]") {
  const std::vector<SweepAxis> axes = {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  CHECK(point_count(axes) == 6);  // 2 * 3
  // The last axis varies fastest: index = i_a * 3 + i_b.
  CHECK(point_values(axes, 0) == std::vector<std::string>{"1", "x"});
  CHECK(point_values(axes, 2) == std::vector<std::string>{"1", "z"});
  CHECK(point_values(axes, 3) == std::vector<std::string>{"2", "x"});
  CHECK(point_values(axes, 5) == std::vector<std::string>{"2", "z"});
  CHECK(point_count({}) == 1);  // no axes: the scenario itself is the one point
}

TEST_CASE("sweep: zipped axes move together as one dimension", "[sweep][zip]") {
  // cp and nodes zipped (3 positions), seq_len its own dimension (2): 3 x 2 = 6 points; the zip sits where its
  // first axis is, so index = i_zip * 2 + i_seq.
  const std::vector<SweepAxis> axes = {{"parallel.cp", {"8", "16", "32"}, "", true},
                                       {"run.seq_len", {"32K", "64K"}},
                                       {"platform.nodes", {"1", "2", "4"}, "", true}};
  CHECK(point_count(axes) == 6);
  CHECK(point_values(axes, 0) == std::vector<std::string>{"8", "32K", "1"});
  CHECK(point_values(axes, 1) == std::vector<std::string>{"8", "64K", "1"});
  CHECK(point_values(axes, 4) == std::vector<std::string>{"32", "32K", "4"});
  // The sweep block's `zip:` mapping; zipped values may repeat (nodes 1, 1, 2), positions are the points.
  const auto block = axes_of("sweep:\n  zip:\n    parallel.cp: [1, 2, 4]\n    platform.nodes: [1, 1, 2]\n"
                             "  run.seq_len: [32K, 64K]\n");
  REQUIRE(block.size() == 3);
  CHECK((block[0].zipped && block[1].zipped && !block[2].zipped));
  CHECK(point_count(block) == 6);
  CHECK(point_values(block, 5) == std::vector<std::string>{"4", "2", "64K"});
  // Different lengths in one zip are refused where the second is written (line 8, column 5), and on the CLI.
  const std::string file = test::write_temp(kBase, "sweep.yaml");
  CHECK_THROWS_WITH(axes_of("sweep:\n  zip:\n    parallel.cp: [1, 2, 4]\n    platform.nodes: [1, 2]\n"),
                    file + ":8:5: sweep.zip.platform.nodes: 2 values, but 'parallel.cp' in the same zip has 3");
  CHECK_THROWS_WITH(combine_axes({}, {parse_axis_arg("parallel.cp=1,2", true), parse_axis_arg("run.seq_len=1K", true)}),
                    "--zip:1:1: run.seq_len: 1 values, but 'parallel.cp' in the same zip has 2");
  // sweep.json keeps the zip: a record round-trips to the same points.
  SweepRecord r;
  r.scenario = "x.yaml";
  r.axes = axes;
  for (std::size_t i = 0; i < point_count(axes); ++i)
    r.points.push_back({i, point_values(axes, i), "ok", "", {{"makespan_s", 1.0}}});
  const auto text = sweep_json(r).dump(2);
  CHECK(sweep_json(sweep_from_json(nlohmann::ordered_json::parse(text), "x/sweep.json")).dump(2) == text);
}

TEST_CASE("sweep: the scenario's sweep block is read in file order and ignored by a single run", "[sweep]") {
  const auto axes = axes_of("sweep:\n  run.seq_len: [32K, 128K]\n  parallel.cp: [1, 2, 4]\n");
  REQUIRE(axes.size() == 2);
  CHECK(axes[0].key == "run.seq_len");
  CHECK(axes[0].values == std::vector<std::string>{"32K", "128K"});
  CHECK(axes[1].values == std::vector<std::string>{"1", "2", "4"});
  const Scenario s = test::scenario_from(kBase + "sweep:\n  parallel.cp: [2, 4]\n");
  CHECK(s.parallel.cp == 1);  // the base value: `cpsim run` does not apply the sweep
}

TEST_CASE("sweep: a bad sweep block is a located error", "[sweep][errors]") {
  const std::string file = test::write_temp(kBase, "sweep.yaml");
  auto error_of = [](const std::string& block) {
    try {
      (void)axes_of(block);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Columns: "  parallel.cp: " is 15 characters, so the value starts at column 16.
  CHECK(error_of("sweep:\n  parallel.cp: 4\n") ==
        file + ":6:16: sweep.parallel.cp: expected a non-empty list of values, e.g. [1, 2, 4]");
  CHECK(error_of("sweep:\n  parallel.cp: []\n") ==
        file + ":6:16: sweep.parallel.cp: expected a non-empty list of values, e.g. [1, 2, 4]");
  // [2, 4, 2]: the second '2' is at column 16 + 7.
  CHECK(error_of("sweep:\n  parallel.cp: [2, 4, 2]\n") == file + ":6:23: sweep.parallel.cp: '2' appears twice");
  CHECK(error_of("sweep:\n  parallel.cp: [[2]]\n") == file + ":6:17: sweep.parallel.cp: each value must be a scalar");
  CHECK(error_of("sweep:\n  parallel: [x]\n  parallel.cp: [2]\n") ==
        file + ":7:16: sweep.parallel.cp: overlaps with the axis 'parallel'");
  CHECK(error_of("sweep:\n  parallel..cp: [2]\n") ==
        file + ":6:3: sweep.parallel..cp: expected a key path such as parallel.cp");
  CHECK(error_of("sweep: [1, 2]\n") == file + ":5:8: sweep: expected a mapping, got a sequence");
  // load_scenario checks the block too, so `cpsim run` and `validate` reject it.
  REQUIRE_THROWS_WITH(test::scenario_from(kBase + "sweep:\n  parallel.cp: 4\n"),
                      Catch::Contains("sweep.parallel.cp: expected a non-empty list of values"));
}

TEST_CASE("sweep: --axis replaces a block axis in place or adds one; --set may not touch a swept key", "[sweep]") {
  const std::vector<SweepAxis> block = {{"parallel.cp", {"2", "4"}}, {"run.seq_len", {"32K"}}};
  const auto axes = combine_axes(block, {parse_axis_arg("run.seq_len=64K,1M"), parse_axis_arg("parallel.tp=1,2")});
  REQUIRE(axes.size() == 3);
  CHECK(axes[0].values == std::vector<std::string>{"2", "4"});
  CHECK(axes[1].key == "run.seq_len");
  CHECK(axes[1].values == std::vector<std::string>{"64K", "1M"});
  CHECK(axes[2].key == "parallel.tp");
  CHECK(point_count(axes) == 8);  // 2 * 2 * 2

  REQUIRE_THROWS_WITH(parse_axis_arg("parallel.cp"), "--axis:1:1: parallel.cp: expected key.path=v1,v2,...");
  REQUIRE_THROWS_WITH(parse_axis_arg("parallel.cp=1,,2"), "--axis:1:1: parallel.cp: empty value in '1,,2'");
  REQUIRE_THROWS_WITH(parse_axis_arg("parallel.cp=1,2,1"), "--axis:1:1: parallel.cp: '1' appears twice");
  REQUIRE_THROWS_WITH(combine_axes(block, {parse_axis_arg("parallel=1")}),
                      "--axis:1:1: parallel: overlaps with the axis 'parallel.cp'");
  REQUIRE_THROWS_WITH(combine_axes({}, {parse_axis_arg("a=1"), parse_axis_arg("a=2")}), "--axis:1:1: a: given twice");
  REQUIRE_THROWS_WITH(check_overrides_against_axes({"parallel.cp=8"}, axes),
                      "--set:1:1: parallel.cp: 'parallel.cp' is swept; pin it with --axis parallel.cp=VALUE");
  REQUIRE_THROWS_WITH(check_overrides_against_axes({"sweep.x=[1]"}, axes),
                      "--set:1:1: sweep.x: change the sweep with --axis key=v1,v2,...");
  CHECK_NOTHROW(check_overrides_against_axes({"model.layers=2", "parallel.cpx=1"}, axes));
}

TEST_CASE("sweep: --shard I/N takes the points with index % N == I", "[sweep]") {
  const Shard s = parse_shard("1/3");
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < 12; ++i)
    if (s.contains(i)) mine.push_back(i);
  CHECK(mine == std::vector<std::size_t>{1, 4, 7, 10});
  CHECK(parse_shard("").count == 1);
  REQUIRE_THROWS_WITH(parse_shard("3/3"), "--shard:1:1: 3/3: expected 0 <= I < N");
  REQUIRE_THROWS_WITH(parse_shard("0/0"), "--shard:1:1: 0/0: expected 0 <= I < N");
  REQUIRE_THROWS_WITH(parse_shard("1-3"), "--shard:1:1: 1-3: expected I/N, e.g. 0/4");
  REQUIRE_THROWS_WITH(parse_shard("-1/3"), "--shard:1:1: -1/3: expected I/N, e.g. 0/4");
  REQUIRE_THROWS_WITH(parse_shard("1/3x"), "--shard:1:1: 1/3x: expected I/N, e.g. 0/4");
}

TEST_CASE("sweep: CSV fields are quoted per RFC 4180", "[sweep]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a, b") == "\"a, b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
}

TEST_CASE("sweep: the CSV has one row per point, axes first, failures with their error", "[sweep]") {
  const std::string csv = sweep_csv(sample_record());
  std::vector<std::string> lines;
  for (std::size_t start = 0, nl; (nl = csv.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(csv.substr(start, nl - start));
  REQUIRE(lines.size() == 7);  // header + 3 x 2 points
  CHECK(lines[0].rfind("index,parallel.cp,run.seq_len,status,error,cp,tp,seq_len,makespan_s,", 0) == 0);
  // Per-kind columns come after the fixed ones, present because some point has them.
  CHECK(lines[0].size() > 50);
  const std::string tail = ",memory_max_bytes,fits,memory_overflow_bytes,phase,cp_bytes_per_layer.dense";
  CHECK(lines[0].substr(lines[0].size() - tail.size()) == tail);
  const std::size_t after_makespan = fixed_metric_columns().size() - 4;  // cp, tp, seq_len, makespan_s first
  // Point 0: cp 2, 32K; makespan 0.1 (shortest round-trip form); per-kind bytes 1000 * 0.
  CHECK(lines[1] == "0,2,32K,ok,,,,,0.1" + std::string(after_makespan, ',') + ",0");
  // Point 1 has no per-kind column: an empty cell. 0.1 + 0.2 * 1 = 0.30000000000000004 in binary64.
  CHECK(lines[2] == "1,2,64K,ok,,,,,0.30000000000000004" + std::string(after_makespan, ',') + ",");
  // Point 3 failed: its error (with a comma, hence quoted) and empty metric cells.
  CHECK(lines[4] == "3,4,64K,invalid,\"--set:1:1: parallel.cp: cp x tp = 8 x 1 = 8 GPUs, but the platform has 4\"" +
                        std::string(fixed_metric_columns().size() + 1, ','));
}

TEST_CASE("sweep: sweep.json round-trips to the same CSV and JSON", "[sweep]") {
  const SweepRecord r = sample_record();
  const auto text = sweep_json(r).dump(2);
  const SweepRecord back = sweep_from_json(nlohmann::ordered_json::parse(text), "x/sweep.json");
  CHECK(sweep_json(back).dump(2) == text);
  CHECK(sweep_csv(back) == sweep_csv(r));
  auto bad = nlohmann::ordered_json::parse(text);
  bad["points"][1]["values"]["parallel.cp"] = "8";  // point 1 is (2, 64K)
  REQUIRE_THROWS_WITH(sweep_from_json(bad, "x/sweep.json"),
                      "x/sweep.json:1:1: (sweep.json): not a cpsim sweep record: point 1 has values that do not match "
                      "its index");
}

TEST_CASE("sweep: merging shards gives the unsharded record byte for byte", "[sweep][merge]") {
  const SweepRecord full = sample_record();
  std::vector<SweepRecord> shards;
  for (std::size_t k = 0; k < 4; ++k) {  // 4 shards of 6 points: sizes 2, 2, 1, 1
    SweepRecord s = full;
    s.shard = Shard{k, 4};
    s.points.clear();
    for (const auto& p : full.points)
      if (s.shard->contains(p.index)) s.points.push_back(p);
    // Shard files go through JSON, as `cpsim merge` reads them.
    shards.push_back(sweep_from_json(nlohmann::ordered_json::parse(sweep_json(s).dump(2)), fmt::format("s{}", k)));
  }
  // The shard holding only point 3 (the failed one) has no per-kind column: the merge rebuilds the header.
  CHECK(sweep_csv(shards[3]).find("cp_bytes_per_layer.dense") == std::string::npos);
  const std::vector<std::string> names = {"s0", "s1", "s2", "s3"};
  const SweepRecord merged = merge_sweeps({shards[2], shards[0], shards[3], shards[1]}, names);
  CHECK(sweep_csv(merged) == sweep_csv(full));
  CHECK(sweep_json(merged).dump(2) == sweep_json(full).dump(2));

  REQUIRE_THROWS_WITH(merge_sweeps({shards[0], shards[1], shards[3]}, {"s0", "s1", "s3"}),
                      "merge:1:1: (points): 1 of 6 points missing (2): is a shard missing?");
  REQUIRE_THROWS_WITH(merge_sweeps({shards[0], shards[0]}, {"a", "b"}),
                      "b:1:1: (sweep.json): point 0 is also in a");
  SweepRecord other = shards[1];
  other.overrides = {"model.layers=3"};
  const char* not_same = "b:1:1: (sweep.json): not the same sweep as a (scenario or its content, cpsim version, --set, "
                         "axes or --traces differ)";
  REQUIRE_THROWS_WITH(merge_sweeps({shards[0], other}, {"a", "b"}), not_same);
  // Shards of two versions of the scenario file, or of two cpsim versions, do not merge either.
  SweepRecord edited = shards[1];
  edited.scenario_fnv1a64 = "0123456789abcdef";
  REQUIRE_THROWS_WITH(merge_sweeps({shards[0], edited}, {"a", "b"}), not_same);
  SweepRecord older = shards[1];
  older.cpsim_version = "0.0.1";
  REQUIRE_THROWS_WITH(merge_sweeps({shards[0], older}, {"a", "b"}), not_same);
}

TEST_CASE("sweep: headline metrics are read from summary.json", "[sweep]") {
  // A hand-made summary: 2 GPUs; GPU 1 finishes the last layer, so its timeline is the breakdown:
  // compute 3.0 + exposed comm 0.5 + idle (4.0 - 3.0 - 0.5 = 0.5) = makespan 4.0.
  const auto s = nlohmann::json::parse(R"({
    "makespan_s": 4.0,
    "bytes_total": {"cp": 100, "tp": 20, "ep": 0, "dp": 0, "pp": 0},
    "layers": [{"critical_gpu": 0}, {"critical_gpu": 1}],
    "ranks": [
      {"gpu": 0, "compute_busy_s": 3.5, "exposed_comm_s": 0.25, "memory_bytes": {"total": 700}},
      {"gpu": 1, "compute_busy_s": 3.0, "exposed_comm_s": 0.5, "memory_bytes": {"total": 900}}],
    "memory": {"fits": false, "overflow_bytes": 100},
    "volumes": [
      {"layer_kind": "swa", "cp_algorithm": "ring", "simulated_max_rank_received_bytes_per_layer": 7, "match": true},
      {"layer_kind": "dense", "cp_algorithm": "ring", "simulated_max_rank_received_bytes_per_layer": 9, "match": false}],
    "scenario": {"parallel": {"cp": 2, "tp": 1}, "run": {"seq_len": 4096}}
  })");
  const auto m = point_metrics(s);
  CHECK(m["cp"] == 2);
  CHECK(m["seq_len"] == 4096);
  CHECK(m["makespan_s"] == 4.0);
  CHECK(m["critical_gpu"] == 1);
  CHECK(m["critical_compute_s"] == 3.0);
  CHECK(m["critical_exposed_comm_s"] == 0.5);
  CHECK(m["critical_idle_s"] == 0.5);
  CHECK(m["compute_busy_max_s"] == 3.5);   // GPU 0
  CHECK(m["compute_busy_mean_s"] == 3.25); // (3.5 + 3.0) / 2
  CHECK(m["exposed_comm_max_s"] == 0.5);   // GPU 1
  CHECK(m["cp_bytes_total"] == 100);
  CHECK(m["tp_bytes_total"] == 20);
  CHECK(m["memory_max_bytes"] == 900);     // GPU 1
  CHECK(m["fits"] == false);               // summary.memory, as given
  CHECK(m["memory_overflow_bytes"] == 100);
  CHECK(m["cp_bytes_per_layer.swa"] == 7);
  CHECK(m["cp_bytes_per_layer.dense"] == 9);
  CHECK(m["formula_match.dense"] == false);
  CHECK(m["cp_algorithm.swa"] == "ring");
  // Kinds in name order, whatever the summary's order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : m.items()) keys.push_back(k);
  CHECK(std::find(keys.begin(), keys.end(), "cp_bytes_per_layer.dense") <
        std::find(keys.begin(), keys.end(), "cp_bytes_per_layer.swa"));
}

TEST_CASE("sweep: a failed worker becomes a status and a one-line error", "[sweep]") {
  SweepPoint p;
  CHECK_FALSE(record_failure(p, WorkerOutcome{0, 0, "[warning] chatty\n"}));  // exit 0: read its summary instead
  REQUIRE(record_failure(p, WorkerOutcome{2, 0, "x.yaml:4:8: run.seq_len: must be positive\n"}));
  CHECK(p.status == "invalid");
  CHECK(p.error == "x.yaml:4:8: run.seq_len: must be positive");
  REQUIRE(record_failure(p, WorkerOutcome{1, 0, ""}));
  CHECK(p.status == "failed");
  CHECK(p.error == "exited with code 1");
  REQUIRE(record_failure(p, WorkerOutcome{-1, 6, "terminate called after throwing\n  what():  boom\n"}));
  CHECK(p.status == "crashed");
  CHECK(p.error == std::string("killed by signal 6 (") + strsignal(6) + "): what():  boom");
}
