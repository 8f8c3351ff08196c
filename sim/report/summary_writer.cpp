#include "sim/report/summary_writer.hpp"

#include <cmath>

#include "sim/scenario/input_files.hpp"
#include "workloads/attention/registry.hpp"
#include "workloads/expert_routing.hpp"

namespace cpsim {
namespace {

using json = nlohmann::ordered_json;

// Byte counts are integers in the model; write them as JSON integers.
json bytes(double b) { return static_cast<std::int64_t>(std::llround(b)); }

json by_class(const std::array<double, kTrafficClasses>& v) {
  json j = json::object();
  for (Traffic t : {Traffic::CP, Traffic::TP, Traffic::EP, Traffic::DP, Traffic::PP})
    j[traffic_name(t)] = bytes(v[static_cast<std::size_t>(t)]);
  return j;
}

}  // namespace

// The routing the EP all-to-alls and expert kernels used (workloads/expert_routing.hpp).
json ep_routing_json(const ParallelSpec& p) {
  const ExpertRouting r = expert_routing(p);
  return {{"hot_share", p.ep_hot_share == 0 ? 1.0 / p.ep : p.ep_hot_share},
          {"capacity_factor", p.ep_capacity_factor},
          {"share_per_ep_rank", r.share},
          {"hot_rank_load_factor", r.load_factor(0)},
          {"dropped_share", r.dropped_share}};
}

json resolved_scenario_json(const Scenario& s) {
  const PlatformSpec& p = s.platform;
  json platform = {{"preset", p.preset},      {"file", p.xml_file},
                   {"nodes", p.nodes},        {"gpus_per_node", p.gpus_per_node},
                   {"gpu_count", p.gpu_count()}};
  platform["gpu"] = {{"key", p.gpu.key},
                     {"name", p.gpu.name},
                     {"bf16_flops", p.gpu.bf16_flops},
                     {"fp8_flops", p.gpu.fp8_flops},
                     {"hbm_bytes", bytes(p.gpu.hbm_bytes)},
                     {"hbm_bw_Bps", p.gpu.hbm_bw_Bps},
                     {"sms", p.gpu.sm_count},
                     {"efficiency",
                      {{"gemm", p.gpu.efficiency.gemm},
                       {"attention", p.gpu.efficiency.attention},
                       {"memory", p.gpu.efficiency.memory}}}};
  if (p.xml_file.empty()) {
    platform["nvlink_bw_Bps"] = p.nvlink_bw_Bps;
    platform["nvlink_latency_s"] = p.nvlink_latency_s;
    platform["nic_bw_Bps"] = p.nic_bw_Bps;
    platform["nic_latency_s"] = p.nic_latency_s;
    if (!p.port_bw_Bps.empty()) {
      json ports = json::object();
      for (const auto& [name, bw_Bps] : p.port_bw_Bps) ports[name] = bw_Bps;
      platform["link_bw_Bps"] = ports;
    }
  }
  const ModelSpec& m = s.model;
  json model = {{"name", m.name},         {"layers", m.layers},   {"d_model", m.d_model},
                {"n_heads", m.n_heads},   {"n_kv_heads", m.n_kv_heads}, {"head_dim", m.head_dim},
                {"ffn_dim", m.ffn_dim},   {"vocab", m.vocab},     {"sliding_window", m.sliding_window},
                {"mla", {{"d_c", m.mla.d_c}, {"rope_dim", m.mla.rope_dim}}},
                {"attention",
                 {{"pattern", pattern_names(m.attention.pattern)}, {"csa_ratio", m.attention.csa_ratio},
                  {"hca_ratio", m.attention.hca_ratio}, {"csa_top_k", m.attention.csa_top_k},
                  {"dsa_top_k", m.attention.dsa_top_k}, {"moba_block", m.attention.moba_block},
                  {"moba_top_k_blocks", m.attention.moba_top_k_blocks}}}};
  json cp_plan = json::object();
  for (const auto& kind : attention_kinds()) {
    json entry = {{"algorithm", algorithm_name(s.cp.algorithm(kind.kind))}};
    if (kind.summary_fields)
      for (const auto& [key, value] : kind.summary_fields(s.cp)) entry[key] = value;
    cp_plan[kind.name] = entry;
  }
  return {{"name", s.name},
          {"file", s.file},
          {"model_file", s.model_file},
          {"inputs", input_files_json(s)},
          {"platform", platform},
          {"model", model},
          {"run",
           {{"phase", phase_name(s.run.phase)},
            {"seq_len", s.run.seq_len},
            {"new_tokens", s.run.new_tokens},
            {"micro_batches", s.run.micro_batches},
            {"cached_tokens", s.run.cached_tokens},
            {"batch", s.run.batch},
            {"dtype", dtype_name(s.run.dtype)},
            {"recompute", s.run.recompute == Recompute::FULL        ? "full"
                          : s.run.recompute == Recompute::SELECTIVE ? "selective"
                                                                    : "none"},
            {"on_oom", s.run.oom_is_error ? "error" : "warn"},
            {"memory_reserve_bytes", bytes(s.run.memory_reserve_bytes)}}},
          {"parallel", {{"cp", s.parallel.cp}, {"tp", s.parallel.tp}, {"dp", s.parallel.dp}, {"pp", s.parallel.pp},
                        {"ep", s.parallel.ep}, {"zero", s.parallel.zero}, {"order", s.parallel.order},
                        {"sequence_parallel", s.parallel.sequence_parallel}, {"tp_comm_overlap", s.parallel.tp_comm_overlap},
                        {"tp_comm_overlap_off", s.parallel.tp_comm_overlap_off}, {"grad_sync", kGradSyncNames.name(s.parallel.grad_sync)},
                        {"ep_routing", ep_routing_json(s.parallel)}}},
          {"cp", cp_plan},
          {"contention",
           {{"mode", contention_mode_name(s.contention.mode)},
            {"channels", s.contention.channels},
            {"chunk_bytes", s.contention.chunk_bytes},
            {"channel_bw_Bps", s.contention.channel_bw_Bps},
            {"interference_Bps", s.contention.interference_Bps},
            {"chunk_overhead_bytes", s.contention.chunk_overhead_bytes}}}};
}

static json contention_json(const ContentionMetrics& c) {
  return {{"cp_overlap_with_tp_ep_s", c.cp_overlap_with_tp_ep_s},
          {"flow_wait_s", c.flow_wait_s},
          {"flow_slowdown_s", c.flow_slowdown_s},
          {"compute_slowdown_s", c.compute_slowdown_s}};
}

json summary_json(const Scenario& s, const Metrics& m, const TraceStats* trace) {
  json j;
  j["cpsim_summary_version"] = 1;
  j["name"] = s.name;
  j["makespan_s"] = m.makespan_s;
  j["tasks"] = m.tasks;
  j["flows"] = m.flows;
  j["bytes_total"] = by_class(m.total_bytes);
  if (s.run.phase == Phase::DECODE)
    j["decode"] = {{"context_len", s.run.seq_len},
                   {"new_tokens", s.run.new_tokens},
            {"micro_batches", s.run.micro_batches},
            {"cached_tokens", s.run.cached_tokens},
                   {"time_per_output_token_s", m.makespan_s / s.run.new_tokens}};

  json layers = json::array();
  for (const auto& l : m.layers) {
    layers.push_back({{"index", l.info.index},
                      {"kind", l.info.kind_name()},
                      {"cp_algorithm", l.info.algorithm_name()},
                      {"t_start_s", l.t_start_s},
                      {"t_end_s", l.t_end_s},
                      {"compute_s", l.compute_s},
                      {"exposed_comm_s", l.exposed_comm_s},
                      {"idle_s", l.idle_s},
                      {"attention_balance", l.attention_balance},
                      {"critical_gpu", l.critical_gpu},
                      {"contention", contention_json(l.contention)}});
    if (l.relayout_bytes > 0 || l.relayout_formula_bytes > 0)  // a layer whose token layout differs from the last
      layers.back()["relayout"] = {{"simulated_max_rank_received_bytes", bytes(l.relayout_bytes)},
                                   {"formula_bytes", bytes(l.relayout_formula_bytes)}};
  }
  j["layers"] = layers;

  json kinds = json::array();
  for (const auto& k : m.by_kind)
    kinds.push_back({{"layer_kind", k.layer_kind},
                     {"cp_algorithm", k.cp_algorithm},
                     {"layers", k.layers},
                     {"time_s", k.time_s},
                     {"compute_s", k.compute_s},
                     {"exposed_comm_s", k.exposed_comm_s},
                     {"idle_s", k.idle_s},
                     {"attention_balance", k.attention_balance},
                     {"cp_bytes_per_rank_per_layer", bytes(k.cp_bytes_per_rank_per_layer)},
                     {"cp_bytes_total", bytes(k.cp_bytes_total)}});
  j["by_layer_kind"] = kinds;

  json ranks = json::array();
  for (const auto& r : m.ranks)
    ranks.push_back({{"gpu", r.gpu},
                     {"node", r.node},
                     {"local_gpu", r.local_gpu},
                     {"dp_rank", r.dp_rank},
                     {"cp_rank", r.cp_rank},
                     {"tp_rank", r.tp_rank},
                     {"pp_stage", r.pp_stage},
                     {"compute_busy_s", r.compute_busy_s},
                     {"exposed_comm_s", r.exposed_comm_s},
                     {"contention", contention_json(r.contention)},
                     {"bytes_sent", by_class(r.bytes_sent)},
                     {"bytes_received", by_class(r.bytes_received)},
                     {"memory_bytes",
                      {{"weights", bytes(r.memory.weights_bytes)},
                       {"kv_cache", bytes(r.memory.kv_cache_bytes)},
                       {"kv_cache_seed_formula", bytes(r.memory.kv_cache_seed_bytes)},
                       {"activations", bytes(r.memory.activations_bytes)},
                       {"comm_buffers", bytes(r.memory.comm_buffers_bytes)},
                       {"gradients", bytes(r.memory.gradients_bytes)},
                       {"optimizer_states", bytes(r.memory.optimizer_states_bytes)},
                       {"framework_reserve", bytes(r.memory.framework_reserve_bytes)},
                       {"total", bytes(r.memory.total_bytes())},
                       {"peak", bytes(r.memory_peak_bytes)},
                       {"peak_t_s", r.memory_peak_t_s}}}});
  j["ranks"] = ranks;
  j["memory"] = {{"hbm_capacity_bytes", bytes(m.memory.capacity_bytes)},
                 {"peak_bytes", bytes(m.memory.need_bytes)},
                 {"peak_gpu", m.memory_peak_gpu},
                 {"peak_t_s", m.ranks.empty() ? 0.0 : m.ranks[m.memory_peak_gpu].memory_peak_t_s},
                 {"closed_form_bytes", bytes(m.ranks.empty() ? 0.0 : m.ranks[m.memory_peak_gpu].memory.total_bytes())},
                 {"fits", m.memory.fits},
                 {"overflow_bytes", bytes(m.memory.overflow_bytes)},
                 {"largest_term", m.memory.largest_term}};

  if (m.pipeline) {
    json stages = json::array();
    for (const StageMetrics& st : m.pipeline->stage_metrics)
      stages.push_back({{"stage", st.stage},
                        {"first_gpu", st.first_gpu},
                        {"layers", st.layers},
                        {"passes", st.passes},
                        {"busy_s", st.busy_s},
                        {"bubble_s", st.bubble_s},
                        {"memory_peak_bytes", bytes(st.memory_peak_bytes)}});
    j["pipeline"] = {{"stages", m.pipeline->stages},
                     {"virtual_stages", m.pipeline->virtual_stages},
                     {"micro_batches", m.pipeline->micro_batches},
                     {"schedule", m.pipeline->schedule},
                     {"bubble_fraction", m.pipeline->bubble_fraction},
                     {"ideal_bubble_fraction", m.pipeline->ideal_bubble_fraction},
                     {"per_stage", stages}};
  }

  json volumes = json::array();
  for (const auto& v : m.volumes) {
    json row = {{"layer_kind", v.layer_kind},
                {"cp_algorithm", v.cp_algorithm},
                {"simulated_max_rank_received_bytes_per_layer", bytes(v.simulated_bytes)}};
    row["formula_bytes"] = v.formula_bytes ? bytes(*v.formula_bytes) : json(nullptr);
    row["formula"] = v.formula;
    row["match"] = v.formula_bytes && std::llround(*v.formula_bytes) == std::llround(v.simulated_bytes);
    if (v.exact) row["exact"] = *v.exact;
    volumes.push_back(row);
  }
  j["volumes"] = volumes;
  if (trace)
    j["trace"] = {{"file", s.gzip_trace ? "trace.json.gz" : "trace.json"},
                  {"slices", trace->slices},
                  {"flows", trace->flows},
                  {"counter_tracks", trace->counter_tracks},
                  {"processes", trace->processes}};
  j["scenario"] = resolved_scenario_json(s);
  return j;
}

nlohmann::ordered_json engine_json(const TaskGraph& g, const std::string& no_symmetry) {
  nlohmann::ordered_json fast;
  const RankSymmetry* sym = g.symmetry();
  fast["collapsed"] = sym != nullptr;
  if (sym) {
    fast["symmetry"] = "tp-rotation";
    fast["orbit_size"] = sym->orbit_size();
  } else {
    fast["reason"] = g.uncollapsed_reason().empty() ? no_symmetry : g.uncollapsed_reason();
  }
  fast["tasks_simulated"] = g.task_count();
  fast["flows_simulated"] = g.flow_count();
  fast["tasks_represented"] = g.task_count() * g.copies_per_task();
  fast["tasks_copied"] = g.repeated_tasks();  // of tasks_simulated: copied from the layer before, not built
  return {{"fast_path", fast}};
}

}  // namespace cpsim
