#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "sim/scenario/attention_reader.hpp"
#include "sim/scenario/hf_config.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "sim/serve/instance_model.hpp"
#include "sim/serve/serve_reader.hpp"
#include "workloads/attention/registry.hpp"
#include "workloads/memory.hpp"
#include "workloads/rank_layout.hpp"

namespace cpsim {
namespace fs = std::filesystem;
namespace {

struct Override {
  std::string path;
  YAML::Node value;
};

std::vector<Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<Override> out;
  for (const auto& text : texts) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(fmt::format("--set:1:1: {}: expected key.path=value", text));
    const std::string path = text.substr(0, eq);
    // Every segment of key.path is a name: ".parallel", "parallel..cp" and "parallel." are located at --set.
    if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos)
      throw InputError(fmt::format("--set:1:1: {}: a key path is names joined by single dots, e.g. parallel.cp",
                                   path));
    YAML::Node value;
    try {
      value = YAML::Load(text.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
      throw InputError(fmt::format("--set:1:{}: {}: {}", eq + 2 + e.mark.column, text.substr(0, eq), e.msg));
    }
    out.push_back({text.substr(0, eq), value});
  }
  return out;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(path.substr(start, dot - start));
  parts.push_back(path.substr(start));
  return parts;
}

// Sets root[a][b][c] = value, creating mappings on the way (yaml-cpp nodes are handles, hence the copies).
void assign(YAML::Node root, const std::vector<std::string>& parts, std::size_t from, const YAML::Node& value,
            const std::string& path) {
  YAML::Node cur = root;
  for (std::size_t i = from; i + 1 < parts.size(); ++i) {
    YAML::Node next = cur[parts[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap())
      throw InputError(fmt::format("--set:1:1: {}: '{}' is not a mapping", path, parts[i]));
    if (!next.IsDefined() || next.IsNull()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    cur.reset(cur[parts[i]]);
  }
  cur[parts.back()] = value;
}

Dtype read_dtype(MapReader& r, const char* key = "dtype", Dtype fallback = Dtype::BF16) {
  const std::string d = r.choice_or(key, {"bf16", "fp16", "fp8", "fp32"}, dtype_name(fallback));
  return d == "bf16" ? Dtype::BF16 : d == "fp16" ? Dtype::FP16 : d == "fp8" ? Dtype::FP8 : Dtype::FP32;
}

// run.dtypes: per-operation dtypes, each defaulting to run.dtype.
OpDtypes read_op_dtypes(MapReader& run, Dtype base) {
  OpDtypes o{base, base, base, base, base};
  if (!run.has("dtypes")) return o;
  MapReader r = run.map("dtypes");
  o.projections = read_dtype(r, "projections", base);
  o.ffn = read_dtype(r, "ffn", base);
  o.attention = read_dtype(r, "attention", base);
  o.kv_cache = read_dtype(r, "kv_cache", base);
  o.activations = read_dtype(r, "activations", base);
  r.finish();
  return o;
}

ModelSpec read_model(MapReader& r) {
  ModelSpec m;
  m.name = r.text("name");
  m.layers = static_cast<int>(r.integer("layers", 1));
  m.d_model = static_cast<int>(r.integer("d_model", 1));
  m.n_heads = static_cast<int>(r.integer("n_heads", 1));
  m.n_kv_heads = static_cast<int>(r.integer_or("n_kv_heads", m.n_heads, 1));
  m.head_dim = static_cast<int>(r.integer_or("head_dim", m.d_model / m.n_heads, 1));
  m.ffn_dim = static_cast<int>(r.integer("ffn_dim", 1));
  m.vocab = static_cast<int>(r.integer("vocab", 1));
  m.sliding_window = static_cast<int>(r.integer_or("sliding_window", 0, 0));
  if (r.has("mla")) {
    MapReader mla = r.map("mla");
    m.mla.d_c = static_cast<int>(mla.integer("d_c", 1));
    m.mla.rope_dim = static_cast<int>(mla.integer_or("rope_dim", 0, 0));
    mla.finish();
  }
  if (r.has("moe")) {
    MapReader moe = r.map("moe");
    m.moe.experts = static_cast<int>(moe.integer("experts", 1));
    m.moe.top_k = static_cast<int>(moe.integer("top_k", 1));
    m.moe.expert_ffn_dim = static_cast<int>(moe.integer("expert_ffn_dim", 1));
    m.moe.shared_experts = static_cast<int>(moe.integer_or("shared_experts", 0, 0));
    m.moe.first_dense_layers = static_cast<int>(moe.integer_or("first_dense_layers", 0, 0));
    if (m.moe.top_k > m.moe.experts) moe.fail("top_k", "top_k cannot exceed the number of experts");
    moe.finish();
  }
  if (r.has("attention")) {
    MapReader a = r.map("attention");
    m.attention = read_attention(a);
  }
  if (m.n_heads % m.n_kv_heads != 0)
    r.fail("n_kv_heads", fmt::format("n_heads ({}) must be a multiple of n_kv_heads ({})", m.n_heads, m.n_kv_heads));
  r.finish();
  return m;
}

// `serve` is set when run.phase is serve: the request-level run (docs/serving.md), whose lengths and batches come
// from serve.source; its RunSpec is the prefill template of every step (sim/serve/instance_model.hpp).
RunSpec read_run(MapReader& r, bool& serve) {
  RunSpec run;
  const std::string phase = r.choice_or("phase", {"prefill", "decode", "train", "serve"}, "prefill");
  serve = phase == "serve";
  run.phase = serve ? Phase::PREFILL : *kPhaseNames.parse(phase);
  if (serve) {
    for (const char* key : {"seq_len", "context_len", "cached_tokens", "new_tokens", "batch", "micro_batches"})
      if (r.has(key)) r.fail(key, "a serving run takes each request's lengths from serve.source and batches them itself");
    run.seq_len = 128;  // the template's: every step sets its own
  } else {
    // Decode reads the cached context as context_len (its S) and the tokens to generate as new_tokens.
    // A prefill scenario turned to decode (--set run.phase=decode) decodes after its seq_len tokens.
    const bool decode = run.phase == Phase::DECODE;
    if (decode && r.has("seq_len") && r.has("context_len"))
      r.fail("seq_len", "decode reads run.context_len (the cached tokens); give one of seq_len and context_len");
    const char* length_key = decode && r.has("context_len") ? "context_len" : "seq_len";
    run.seq_len = r.count(length_key);
    if (run.seq_len == 0) r.fail(length_key, "must be positive");
    run.micro_batches = static_cast<int>(r.integer_or("micro_batches", 1, 1));  // decode too (HOP-B)
    if (!decode) run.cached_tokens = r.has("cached_tokens") ? r.count("cached_tokens") : 0;
    if (decode) run.new_tokens = static_cast<int>(r.integer_or("new_tokens", 1, 1));
    run.batch = static_cast<int>(r.integer_or("batch", 1, 1));
  }
  run.max_tasks = static_cast<std::uint64_t>(r.integer_or("max_tasks", std::int64_t(run.max_tasks), 1, 10000000000));
  run.fast_path = r.flag_or("fast_path", true);
  run.closed_form_flows = r.flag_or("closed_form_flows", false) && run.fast_path;
  run.dtype = read_dtype(r);
  // Dense attention's mask: causal (language models) or full (non-causal, every pair of the sequence).
  run.full_mask = r.choice_or("mask", {"causal", "full"}, "causal") == "full";
  run.dtypes = read_op_dtypes(r, run.dtype);
  run.oom_is_error = r.choice_or("on_oom", {"warn", "error"}, "warn") == "error";
  run.memory_reserve_bytes = r.size_bytes_or("memory_reserve", run.memory_reserve_bytes);
  if (r.has("recompute") && run.phase != Phase::TRAIN)
    r.fail("recompute", "activation recomputation applies to training (run.phase: train)");
  const std::string recompute = r.choice_or("recompute", {"none", "selective", "full"}, "none");
  run.recompute = recompute == "full" ? Recompute::FULL : recompute == "selective" ? Recompute::SELECTIVE : Recompute::NONE;
  r.finish();
  return run;
}

// `collectives: {tp: {algorithm, protocol, channels}, ...}`: fixed choices per traffic class (docs/calibration.md).
std::map<Traffic, CollectiveOverride> read_collective_overrides(MapReader& r) {
  std::map<Traffic, CollectiveOverride> out;
  for (Traffic cls : {Traffic::TP, Traffic::CP, Traffic::EP, Traffic::DP}) {
    if (!r.has(traffic_name(cls))) continue;
    MapReader c = r.map(traffic_name(cls));
    CollectiveOverride o;
    // "auto" (NCCL's cost model) is the absence of a fixed choice.
    std::vector<std::string> algorithms{"auto"}, protocols{"auto"};
    for (int a = 0; a <= int(CollectiveAlgorithm::HIERARCHICAL); ++a)
      algorithms.push_back(collective_algorithm_name(CollectiveAlgorithm(a)));
    for (int p = 0; p < kProtocols; ++p) protocols.push_back(protocol_name(Protocol(p)));
    const std::string algorithm = c.choice_or("algorithm", algorithms, "auto");
    const std::string protocol = c.choice_or("protocol", protocols, "auto");
    for (int a = 0; a <= int(CollectiveAlgorithm::HIERARCHICAL); ++a)
      if (algorithm == algorithms[a + 1]) o.algorithm = CollectiveAlgorithm(a);
    for (int p = 0; p < kProtocols; ++p)
      if (protocol == protocols[p + 1]) o.protocol = Protocol(p);
    o.channels = static_cast<int>(c.integer_or("channels", 0, 1));
    c.finish();
    out[cls] = o;
  }
  r.finish();
  return out;
}

// outputs.trace_gpus / trace_layers: a list of indices and "a-b" ranges, or one string of them ("0-7,16"), each
// below `count`; sorted, without repeats.
std::vector<int> read_index_set(MapReader& r, const std::string& key, int count, const char* what) {
  if (!r.has(key)) return {};
  const YAML::Node n = r.node(key);
  std::vector<std::string> items;
  const char* expected = "expected a list of indices and ranges, e.g. [0, 4-7], or a string \"0,4-7\"";
  if (n.IsSequence()) {
    for (const auto& e : n) {
      if (!e.IsScalar()) r.fail(key, expected);
      items.push_back(e.Scalar());
    }
  } else if (n.IsScalar()) {
    std::string text = n.Scalar();
    for (std::size_t at = 0; at <= text.size();) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      items.push_back(text.substr(at, comma - at));
      at = comma + 1;
    }
  } else {
    r.fail(key, expected);
  }
  if (items.empty()) r.fail(key, "lists nothing: leave it out to trace everything");
  std::vector<int> out;
  for (std::string item : items) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    const std::size_t dash = item.find('-', 1);
    const auto number = [&](const std::string& t) {
      if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), ::isdigit))
        r.fail(key, fmt::format("'{}': {}", item, expected));
      return std::stoi(t);
    };
    const int first = number(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first) r.fail(key, fmt::format("'{}': a range runs from low to high", item));
    if (last >= count)
      r.fail(key, fmt::format("{} {} does not exist: the simulation has {}s 0-{}", what, last, what, count - 1));
    for (int i = first; i <= last; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ParallelSpec read_parallel(MapReader& r, Phase phase) {
  ParallelSpec p;
  p.cp = static_cast<int>(r.integer_or("cp", 1, 1));
  p.tp = static_cast<int>(r.integer_or("tp", 1, 1));
  p.dp = static_cast<int>(r.integer_or("dp", 1, 1));
  p.pp = static_cast<int>(r.integer_or("pp", 1, 1));
  p.pp_schedule = r.choice_or("pp_schedule", kPipelineScheduleNames, PipelineSchedule::ONE_F_ONE_B);
  const bool interleaved = p.pp_schedule == PipelineSchedule::INTERLEAVED;
  p.pp_virtual_stages = static_cast<int>(r.integer_or("pp_virtual_stages", interleaved ? 2 : 1, 1));
  if (r.has("pp_schedule") && p.pp == 1) r.fail("pp_schedule", "a pipeline schedule needs stages (parallel.pp > 1)");
  if (interleaved && p.pp_virtual_stages < 2)
    r.fail("pp_virtual_stages", "the interleaved schedule runs at least 2 model chunks per stage");
  if (!interleaved && p.pp_virtual_stages != 1)
    r.fail("pp_virtual_stages", "model chunks per stage need parallel.pp_schedule: interleaved");
  if (p.pp > 1 && phase == Phase::DECODE)
    r.fail("pp", "pipeline stages are simulated in prefill and training; decode with pp > 1 is not modelled");
  p.ep = static_cast<int>(r.integer_or("ep", 1, 1));
  if (p.ep != 1 && p.ep != p.tp && p.ep != p.tp * p.cp)
    r.fail("ep", fmt::format("ep spreads experts over the TP group or over all CP x TP GPUs: 1, tp ({}) or tp * cp "
                             "({}), got {}", p.tp, p.tp * p.cp, p.ep));
  if (r.has("ep_hot_share")) {
    p.ep_hot_share = r.number("ep_hot_share");
    if (p.ep == 1) r.fail("ep_hot_share", "routing skew needs expert parallelism (parallel.ep > 1)");
    if (p.ep_hot_share < 1.0 / p.ep || p.ep_hot_share > 1)
      r.fail("ep_hot_share", fmt::format("must be between 1/ep ({}, uniform) and 1", 1.0 / p.ep));
  }
  if (r.has("ep_capacity_factor")) {
    p.ep_capacity_factor = r.number("ep_capacity_factor");
    if (p.ep_capacity_factor < 1) r.fail("ep_capacity_factor", "must be at least 1 (the uniform load)");
  }
  p.zero = static_cast<int>(r.integer_or("zero", 0, 0, 3));
  const bool train = phase == Phase::TRAIN;
  if (p.zero > 0 && !train) r.fail("zero", "ZeRO shards training state (run.phase: train)");
  p.sequence_parallel = r.flag_or("sequence_parallel", false);
  p.tp_comm_overlap = r.flag_or("tp_comm_overlap", false);
  if (p.tp_comm_overlap && !p.sequence_parallel)
    r.fail("tp_comm_overlap", "TP communication overlap chunks the sequence-parallel all-gather and reduce-scatter: "
                              "set parallel.sequence_parallel: true");
  p.grad_sync = r.choice_or("grad_sync", kGradSyncNames, train ? GradSync::OVERLAP : GradSync::NONE);
  if (!train && p.grad_sync != GradSync::NONE)
    r.fail("grad_sync", "gradients are synchronized in training only (run.phase: train)");
  if (r.has("order")) {
    const YAML::Node list = r.node("order");
    std::vector<std::string> order;
    if (list.IsSequence())
      for (const auto& item : list) order.push_back(item.IsScalar() ? item.Scalar() : "");
    std::vector<std::string> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<std::string>{"cp", "dp", "pp", "tp"})
      r.fail("order", "expected the four degrees innermost first, e.g. [tp, cp, pp, dp]");
    // The simulation runs one (dp, pp) replica, so cp and tp must be the two innermost degrees.
    if (!((order[0] == "tp" && order[1] == "cp") || (order[0] == "cp" && order[1] == "tp")))
      r.fail("order", "cp and tp must be the two innermost degrees (dp and pp replicas lie outside them)");
    p.order = order;
    p.cp_inner = order[0] == "cp";
  }
  // Pipeline stages are simulated, so the GPUs between two stages of replica 0 (dp inside pp) are simulated too.
  const bool dp_inside_pp = std::find(p.order.begin(), p.order.end(), "dp") < std::find(p.order.begin(), p.order.end(), "pp");
  if (p.pp > 1 && dp_inside_pp) p.simulated_dp = p.dp;
  if (p.grad_sync != GradSync::NONE) {
    p.simulated_dp = p.dp;
    // Replicas are simulated side by side on consecutive GPU blocks, so pipeline stages may not sit between them.
    const auto at = [&](const char* d) { return std::find(p.order.begin(), p.order.end(), d); };
    if (p.dp > 1 && p.pp > 1 && at("pp") < at("dp"))
      r.fail(r.has("order") ? "order" : "grad_sync",
             "gradient sync simulates the dp replicas of pipeline stage 0 side by side: put dp inside pp in "
             "parallel.order, e.g. [tp, cp, dp, pp]");
  }
  r.finish();
  return p;
}

CpPlan read_cp(MapReader& r) {
  CpPlan plan;
  read_kind_cp_plans(r, plan);  // every registered kind's block, cp.dense included
  r.finish();
  return plan;
}

// "a, b or c" (last_separator " or ") or "a, b, c".
std::string join_names(const std::vector<std::string>& names, const std::string& last_separator) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? last_separator : ", ") + names[i];
  return out;
}

// Cross-field rules, each reported at the key a user would change.
// Byte totals are doubles written as JSON integers: refuse a run whose largest derived total (every GPU moving its
// whole sequence's widest activation, in FP32, at every layer) could pass 2^62.
void check_derived_sizes(const Scenario& s, MapReader& top) {
  const ModelSpec& m = s.model;
  const double width = std::max({double(m.d_model), double(m.n_heads) * m.head_dim, double(m.ffn_dim),
                                 double(m.moe.expert_ffn_dim) * std::max(1, m.moe.top_k)});
  const double bytes = double(s.run.seq_len) * s.run.batch * width * 4 * m.layers * s.platform.gpu_count();
  if (bytes < 4.6e18) return;
  MapReader run(top.self()["run"], top.source(), "run");
  run.fail(s.run.phase == Phase::DECODE ? "context_len" : "seq_len",
           fmt::format("tokens x batch x width x 4 B x layers x GPUs = {:.3g} bytes: byte totals would pass 2^62; "
                       "reduce the sequence, batch, layers or platform",
                       bytes));
}

// Decode: every kind's chosen mode has a decode step, and the kinds computed side by side in one layer agree on
// where the token lives (workloads/attention/decode_lowering.hpp).
void check_decode_modes(const Scenario& s, MapReader& run) {
  for (const auto& layer : s.model.attention.pattern) {
    std::optional<DecodeHome> home;
    for (AttentionKind kind : layer) {
      const AttentionModeDef* m = find_mode(kind, s.cp.algorithm(kind));
      if (!m || !m->decode) {
        std::vector<std::string> decoders;
        for (const auto& mode : attention_kind(kind).modes)
          if (mode.decode) decoders.push_back(algorithm_name(mode.algorithm));
        run.fail("phase", fmt::format("decode is modelled for cp.{}.algorithm {}, got {}", kind_name(kind),
                                      join_names(decoders, " or "), algorithm_name(s.cp.algorithm(kind))));
      }
      if (home && *home != m->decode_home)
        run.fail("phase", fmt::format("the kinds of {} layers keep the decode token on different GPUs; choose CP "
                                      "algorithms that agree",
                                      layer_kinds_name(layer)));
      home = m->decode_home;
    }
  }
}

// Whether the phase has a lowering for every layer kind and the chosen algorithms (from the registry: a decode
// step or a training backward). Reported at run.phase, or at cp.dense.algorithm when the scenario names one.
void check_phase_support(const Scenario& s, MapReader& top) {
  MapReader run(top.self()["run"], top.source(), "run");
  const Phase phase = s.run.phase;
  const CpAlgorithm dense_algo = s.cp.dense.algorithm;
  const AttentionModeDef* dense = find_mode(AttentionKind::DENSE, dense_algo);  // nullptr: auto
  const bool decode = phase == Phase::DECODE;
  const bool dense_layers = s.model.uses(AttentionKind::DENSE);
  if (decode ? dense_layers && !(dense && dense->decode) : (dense && !dense->prefill())) {
    std::vector<std::string> decoders;  // decode-only algorithms first
    for (bool decode_only : {true, false})
      for (const auto& m : attention_kind(AttentionKind::DENSE).modes)
        if (m.decode && m.prefill() != decode_only) decoders.push_back(algorithm_name(m.algorithm));
    const std::string message = decode ? fmt::format("decode needs cp.dense.algorithm {}, got {}",
                                                     join_names(decoders, " or "), algorithm_name(dense_algo))
                                       : fmt::format("{} is a decode algorithm (run.phase: decode)",
                                                     algorithm_name(dense_algo));
    // Located at cp.dense.algorithm when the scenario names one, else at run.phase (a missing key of a const node is
    // invalid: test IsDefined before anything else).
    const YAML::Node cp = top.self()["cp"];
    if (cp.IsDefined() && cp.IsMap() && cp["dense"].IsDefined() && cp["dense"].IsMap())
      MapReader(cp["dense"], top.source(), "cp.dense").fail("algorithm", message);
    run.fail("phase", message);
  }
  if (phase == Phase::PREFILL) return;
  // A kind is modelled in the phase when one of its modes has the phase's lowering.
  auto has_lowering = [&](const AttentionModeDef& m) { return decode ? m.decode != nullptr : m.backward != nullptr; };
  std::vector<std::string> modelled_kinds;
  for (const auto& k : attention_kinds())
    if (std::any_of(k.modes.begin(), k.modes.end(), has_lowering)) modelled_kinds.push_back(k.name);
  for (const auto& layer : s.model.attention.pattern)
    for (AttentionKind kind : layer)
      if (!std::any_of(attention_kind(kind).modes.begin(), attention_kind(kind).modes.end(), has_lowering))
        run.fail("phase", fmt::format("{} is modelled for {} layers only; the model has {} layers",
                                      decode ? "decode" : "training",
                                      join_names(modelled_kinds, ", "), layer_kinds_name(layer)));
  if (decode) {
    check_decode_modes(s, run);
    return;
  }
  for (const auto& layer : s.model.attention.pattern)
    for (AttentionKind kind : layer) {
      const AttentionModeDef* m = find_mode(kind, s.cp.algorithm(kind));
      if (m && m->backward) continue;
      std::vector<std::string> trainable;
      for (const auto& mode : attention_kind(kind).modes)
        if (mode.backward) trainable.push_back(algorithm_name(mode.algorithm));
      run.fail("phase", fmt::format("training is modelled for cp.{}.algorithm {}, got {}", kind_name(kind),
                                    join_names(trainable, " or "), algorithm_name(s.cp.algorithm(kind))));
    }
}

// Pipeline stages (workloads/pipeline_schedule.hpp): whole chunks of layers, enough micro-batches for the
// interleaved schedule, and stages that tile the nodes alike (a stage's collectives are planned on its own GPUs).
void check_pipeline(const Scenario& s, MapReader& top) {
  MapReader par(top.self()["parallel"], top.source(), "parallel");
  const ParallelSpec& p = s.parallel;
  const int chunks = p.pp * p.pp_virtual_stages;
  if (s.model.layers % chunks != 0)
    par.fail(p.pp_virtual_stages > 1 ? "pp_virtual_stages" : "pp",
             fmt::format("the model's {} layers must split evenly into pp x pp_virtual_stages = {} chunks",
                         s.model.layers, chunks));
  if (p.pp_schedule == PipelineSchedule::INTERLEAVED && s.run.phase == Phase::TRAIN && s.run.micro_batches % p.pp != 0)
    MapReader(top.self()["run"], top.source(), "run")
        .fail("micro_batches", fmt::format("the interleaved schedule runs micro-batches in groups of pp ({}): got {}",
                                           p.pp, s.run.micro_batches));
  const int stage_gpus = p.cp * p.tp, per_node = s.platform.gpus_per_node;
  if (per_node > 0 && stage_gpus % per_node != 0 && per_node % stage_gpus != 0)
    par.fail("pp", fmt::format("a pipeline stage's cp x tp = {} GPUs must fill whole {}-GPU nodes or divide one",
                               stage_gpus, per_node));
}

void check_plan(const Scenario& s, MapReader& top) {
  check_derived_sizes(s, top);
  const std::int64_t gpus_needed = std::int64_t(s.parallel.cp) * s.parallel.tp;
  if (gpus_needed > s.platform.gpu_count()) {
    MapReader par(top.self()["parallel"], top.source(), "parallel");
    par.fail("cp", fmt::format("cp x tp = {} x {} = {} GPUs, but the platform has {}", s.parallel.cp, s.parallel.tp,
                               gpus_needed, s.platform.gpu_count()));
  }
  const double all_gpus = double(gpus_needed) * s.parallel.dp * s.parallel.pp;  // a double: no product wraps
  if (all_gpus > s.platform.gpu_count()) {
    MapReader par(top.self()["parallel"], top.source(), "parallel");
    par.fail(s.parallel.dp > 1 ? "dp" : "pp",
             fmt::format("dp x pp x cp x tp = {:.0f} GPUs, but the platform has {}", all_gpus, s.platform.gpu_count()));
  }
  if (s.parallel.pp > 1) check_pipeline(s, top);
  if (s.model.n_heads % s.parallel.tp != 0) {
    MapReader par(top.self()["parallel"], top.source(), "parallel");
    par.fail("tp", fmt::format("n_heads ({}) must be divisible by tp ({})", s.model.n_heads, s.parallel.tp));
  }
  const int kv = s.model.n_kv_heads, tp = s.parallel.tp;
  if ((kv >= tp && kv % tp != 0) || (kv < tp && tp % kv != 0)) {
    MapReader par(top.self()["parallel"], top.source(), "parallel");
    par.fail("tp", fmt::format("n_kv_heads ({}) and tp ({}) must divide one another", kv, tp));
  }
  check_phase_support(s, top);
  if (s.run.phase == Phase::TRAIN) {
    if (s.run.cached_tokens > 0)
      MapReader(top.self()["run"], top.source(), "run").fail("cached_tokens", "training has no persistent KV cache");
  }
  if (s.run.phase == Phase::DECODE) {
    if (s.run.seq_len % s.parallel.cp != 0) {
      MapReader run(top.self()["run"], top.source(), "run");
      run.fail("context_len", fmt::format("the cached context ({}) must split evenly over cp = {}", s.run.seq_len,
                                          s.parallel.cp));
    }
    return;
  }
  if (s.run.cached_tokens % s.parallel.cp != 0)
    MapReader(top.self()["run"], top.source(), "run")
        .fail("cached_tokens", fmt::format("the cached KV ({} tokens) must split evenly over cp = {}",
                                           s.run.cached_tokens, s.parallel.cp));
  const std::uint64_t parts = s.cp.dense.partition == Partition::ZIGZAG ? 2ull * s.parallel.cp : s.parallel.cp;
  if (s.run.seq_len % parts != 0) {
    MapReader run(top.self()["run"], top.source(), "run");
    run.fail("seq_len", fmt::format("S = {} is not divisible by {} ({} partition over cp = {} needs S % {} == 0)",
                                    s.run.seq_len, parts, partition_name(s.cp.dense.partition), s.parallel.cp, parts));
  }
}

// Every step a serving instance runs is a scenario of its own (sim/serve/instance_model.hpp): each class's prefill
// (both algorithms under by-miss-rate) and decode must pass the checks a run would make. A problem is reported at
// the class's cp, with the check's own message.
void check_serve_instances(const Scenario& s, MapReader& top, const YamlSource& model_source) {
  const ServeSpec& spec = *s.serve;
  for (const InstanceClass& c : spec.classes) {
    const std::uint64_t u = StepCostTable::grid_unit(c.cp);
    std::vector<StepShape> shapes{{StepShape::Kind::DECODE, c.cp, spec.decode_pass_q, u, 0, 1}};
    if (spec.prefill_algorithm != PrefillAlgorithm::PASS_Q) shapes.push_back({StepShape::Kind::PREFILL, c.cp, false, u, 0, 1});
    if (spec.prefill_algorithm != PrefillAlgorithm::PASS_KV && c.cp > 1)
      shapes.push_back({StepShape::Kind::PREFILL, c.cp, true, u, u, 1});
    for (const StepShape& shape : shapes) {
      const Scenario step = step_scenario(s, shape);
      try {
        check_plan(step, top);
        check_attention_plan(step.model, step.run, step.parallel, step.cp, top, model_source);
      } catch (const InputError& e) {
        std::string message = e.what();
        for (int colons = 0; colons < 3 && message.find(':') != std::string::npos; ++colons)
          message.erase(0, message.find(':') + 1);  // drop "file:line:col:" of a key the scenario does not have
        throw InputError(fmt::format("{}: an instance of cp {} x tp {} cannot run its {} steps:{}", c.location, c.cp,
                                     spec.tp, shape.kind == StepShape::Kind::DECODE ? "decode" : "prefill", message));
      }
    }
  }
}

}  // namespace

std::string read_scenario_name(MapReader& top) {
  const std::string name = top.text("name");
  if (name.empty() || name.size() > 128 || name == "." || name == ".." ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos)
    top.fail("name", fmt::format("'{}' must be a plain file name (letters, digits, '.', '_', '-'; at most 128)", name));
  return name;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& override_texts) {
  YAML::Node root = load_yaml_file(file);
  const std::vector<Override> overrides = parse_overrides(override_texts);
  YamlSource source{file, {}};
  for (const auto& o : overrides) source.overridden_paths.insert(o.path);
  if (!root.IsMap()) fail_at(root, source, "", "a scenario must be a mapping");
  const std::string dir = fs::path(file).parent_path().string();

  Scenario s;
  s.file = file;
  // The model may live in its own file; load it first so that `--set model.x=...` applies to it (and a
  // `--set model=FILE` picks the file).
  for (const auto& o : overrides)
    if (o.path == "model") root["model"] = o.value;
  YAML::Node model_node = root["model"];
  YamlSource model_source = source;
  if (model_node.IsDefined() && model_node.IsScalar()) {
    // `--set model=FILE` names it on the command line: relative to the working directory, like any argument.
    s.model_file = resolve_input_path(model_node.Scalar(), source.overridden_paths.count("model") ? "." : dir);
    if (s.model_file.empty()) fail_at(model_node, source, "model", fmt::format("model file '{}' not found", model_node.Scalar()));
    model_node = load_yaml_file(s.model_file);
    model_source.file = display_path(s.model_file);
  }
  for (const auto& o : overrides) {
    const auto parts = split_path(o.path);
    if (o.path == "model") continue;  // applied above
    if (parts[0] == "model" && parts.size() > 1 && model_node.IsDefined() && model_node.IsMap())
      assign(model_node, parts, 1, o.value, o.path);
    else
      assign(root, parts, 0, o.value, o.path);
  }

  MapReader top(root, source, "");
  s.name = read_scenario_name(top);
  {
    MapReader r = top.map("platform");
    s.platform = read_platform(r, dir);
  }
  (void)top.node("model");
  if (model_node.IsMap() && static_cast<const YAML::Node&>(model_node)["hf_config"]) {
    const std::string model_dir = s.model_file.empty() ? dir : fs::path(s.model_file).parent_path().string();
    model_node = model_with_hf_config(model_node, model_source, model_dir, s.hf_config_file);
  }
  {
    MapReader r(model_node, model_source, "model");
    s.model = read_model(r);
  }
  bool serve = false;
  {
    MapReader r = top.map("run");
    s.run = read_run(r, serve);
  }
  if (top.has("parallel")) {
    MapReader r = top.map("parallel");
    if (serve && r.has("cp")) r.fail("cp", "a serving run sets CP per instance class (serve.policy)");
    s.parallel = read_parallel(r, s.run.phase);
  } else if (s.run.phase == Phase::TRAIN) {
    s.parallel.grad_sync = GradSync::OVERLAP;  // the default (cp = tp = dp = 1: nothing to synchronize)
  }
  s.parallel.gpus_per_node = s.platform.gpus_per_node;  // node-aware lowerings (LASP-2's 2D all-gather)
  if (top.has("cp")) {
    MapReader r = top.map("cp");
    s.cp = read_cp(r);
  }
  if (top.has("outputs")) {
    MapReader r = top.map("outputs");
    const std::string trace = r.choice_or("trace", {"true", "false", "gzip"}, "true");
    s.gzip_trace = trace == "gzip";
    s.write_trace = trace != "false";
    s.trace_gpus = read_index_set(r, "trace_gpus", RankLayout(s.parallel).simulated_gpus(), "GPU");
    s.trace_layers = read_index_set(r, "trace_layers", s.model.layers, "layer");
    r.finish();
  }
  if (top.has("contention")) {
    MapReader r = top.map("contention");
    s.contention = read_contention(r);
  }
  if (top.has("collectives")) {
    MapReader r = top.map("collectives");
    s.parallel.collectives = read_collective_overrides(r);
  }
  // `exclusive` is Megatron's rule (cp-overview.md, route 1): CP refuses TP communication overlap, so the TP
  // collectives run unoverlapped on the compute stream, T = T_CP + T_TP where they meet.
  if (s.contention.mode == ContentionMode::EXCLUSIVE && s.parallel.tp_comm_overlap && s.parallel.cp > 1) {
    s.parallel.tp_comm_overlap = false;
    s.parallel.tp_comm_overlap_off = "contention.mode exclusive: Megatron disables TP overlap beside CP";
  }
  if (serve) {
    MapReader r = top.map("serve");
    s.serve = read_serve(r, dir, s.platform.gpu_count(), s.parallel.tp);
  } else if (top.has("serve")) {
    top.fail("serve", "a serve block needs run.phase: serve");
  }
  (void)read_sweep_block(top);  // validated here; `cpsim sweep` runs its points, a single run ignores it
  top.finish();
  check_plan(s, top);
  check_attention_plan(s.model, s.run, s.parallel, s.cp, top, model_source);
  if (s.serve) check_serve_instances(s, top, model_source);
  if (s.run.oom_is_error) {  // refused before anything is built by the closed form; `run` checks the timeline's peak
    MapReader run = top.map("run");
    s.on_oom_location = run.location("on_oom");
    const MemoryVerdict v = memory_verdict(prefill_memory({s.model, s.run, s.parallel, s.cp, s.platform.gpu}),
                                           s.platform.gpu.hbm_bytes);
    if (!v.fits) run.fail("on_oom", "a GPU " + describe_overflow(v) + ": it does not fit");
  }
  return s;
}

YAML::Node scenario_document(const std::string& file, const std::vector<std::string>& override_texts) {
  const Scenario resolved = load_scenario(file, override_texts);  // refuses what a run would refuse
  YAML::Node root = YAML::Clone(load_yaml_file(file));
  const std::vector<Override> overrides = parse_overrides(override_texts);
  bool model_overridden = false;
  for (const auto& o : overrides) model_overridden |= o.path.rfind("model.", 0) == 0;
  // A model file that --set changes is written inline, overrides applied, as load_scenario applies them.
  if (model_overridden && !resolved.model_file.empty()) root["model"] = YAML::Clone(load_yaml_file(resolved.model_file));
  for (const auto& o : overrides)
    if (o.path != "model" || resolved.model_file.empty()) assign(root, split_path(o.path), 0, o.value, o.path);
  root.remove("sweep");
  // Const lookups (operator[] on a non-const node adds the key it looks up), defined before typed.
  const YAML::Node& read = root;
  const auto is_path = [](const YAML::Node& n) { return n.IsDefined() && n.IsScalar(); };
  if (is_path(read["model"])) root["model"] = resolved.model_file;
  const YAML::Node platform = read["platform"];
  if (platform.IsDefined() && platform.IsMap()) {
    if (is_path(platform["file"])) root["platform"]["file"] = resolved.platform.xml_file;
    if (is_path(platform["presets"]))
      root["platform"]["presets"] =
          resolve_input_path(platform["presets"].Scalar(), fs::path(file).parent_path().string());
  }
  return root;
}

}  // namespace cpsim
