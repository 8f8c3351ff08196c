#include "workloads/attention/registry.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace cpsim {
namespace {

std::vector<AttentionKindDef>& registry() {
  static std::vector<AttentionKindDef> kinds = [] {
    // One line per built-in kind, in the order of the enum (its values index this list).
    std::vector<AttentionKindDef> k = {dense_attention_kind(), swa_attention_kind(),  csa_attention_kind(),
                                       hca_attention_kind(),   dsa_attention_kind(),  moba_attention_kind(),
                                       linear_attention_kind(), ssm_attention_kind()};
    for (std::size_t i = 0; i < k.size(); ++i) k[i].kind = AttentionKind(i);
    return k;
  }();
  return kinds;
}

}  // namespace

const AttentionModeDef* AttentionKindDef::mode(CpAlgorithm a) const {
  for (const auto& m : modes)
    if (m.algorithm == a) return &m;
  return nullptr;
}

std::vector<std::string> AttentionKindDef::algorithm_names() const {
  std::vector<std::string> out;
  for (const auto& m : modes) out.emplace_back(algorithm_name(m.algorithm));
  for (CpAlgorithm a : resolved_algorithms) out.emplace_back(algorithm_name(a));
  return out;
}

const std::vector<AttentionKindDef>& attention_kinds() { return registry(); }

const AttentionKindDef& attention_kind(AttentionKind kind) {
  const auto& kinds = registry();
  if (std::size_t(kind) >= kinds.size()) throw std::logic_error("unregistered attention kind");
  return kinds[std::size_t(kind)];
}

AttentionKind register_attention_kind(AttentionKindDef def) {
  auto& kinds = registry();
  if (parse_kind(def.name)) throw std::logic_error("attention kind '" + def.name + "' is registered twice");
  if (def.name.find('+') != std::string::npos) throw std::logic_error("'+' joins kinds; a kind's name has none");
  if (!def.mode(def.default_algorithm)) throw std::logic_error("default algorithm of " + def.name + " has no mode");
  def.kind = AttentionKind(kinds.size());
  kinds.push_back(std::move(def));
  return kinds.back().kind;
}

Partition token_layout(AttentionKind kind, const CpPlan& plan) {
  const AttentionKindDef& def = attention_kind(kind);
  return def.token_layout ? def.token_layout(plan) : Partition::CONTIGUOUS;
}

const AttentionModeDef* find_mode(AttentionKind kind, CpAlgorithm algorithm) {
  return attention_kind(kind).mode(algorithm);
}

std::optional<ModeVolume> mode_volume(const CommParams& p, AttentionKind kind, CpAlgorithm algorithm,
                                      const MobaCpPlan& selection, bool backward) {
  const AttentionModeDef* m = find_mode(kind, algorithm);
  const ClosedForm form = !m                           ? nullptr
                          : backward                   ? m->backward_volume
                          : p.decode && m->decode_volume ? m->decode_volume
                                                       : m->volume;
  if (!form) return std::nullopt;
  std::optional<ModeVolume> v = form(p, selection);
  if (v) {
    v->kind = kind;
    v->algorithm = algorithm;
    v->backward = backward;
  }
  return v;
}

std::vector<std::pair<AttentionKind, CpAlgorithm>> volume_modes() {
  std::vector<std::pair<AttentionKind, CpAlgorithm>> out;
  for (const auto& k : registry())
    for (const auto& m : k.modes)
      if (m.volume) out.emplace_back(k.kind, m.algorithm);
  return out;
}

void require_local_multiple(const KindCheck& c, AttentionKind kind, int unit, const char* what) {
  const std::uint64_t local_tokens = c.run.seq_len / c.parallel.cp;
  if (local_tokens % unit != 0)
    c.fail_pattern(fmt::format("{} layers need S/cp ({}) to be a multiple of {} ({})", kind_name(kind), local_tokens, what,
                               unit));
}

// workloads/attention/kind.hpp
const char* kind_name(AttentionKind k) { return attention_kind(k).name.c_str(); }

std::optional<AttentionKind> parse_kind(std::string_view name) {
  for (const auto& k : registry())
    if (k.name == name) return k.kind;
  return std::nullopt;
}

std::string layer_kinds_name(const LayerKinds& kinds) {
  std::string out;
  for (AttentionKind k : kinds) out += (out.empty() ? "" : "+") + std::string(kind_name(k));
  return out;
}

std::vector<std::string> pattern_names(const std::vector<LayerKinds>& pattern) {
  std::vector<std::string> out;
  for (const auto& layer : pattern) out.push_back(layer_kinds_name(layer));
  return out;
}

std::optional<LayerKinds> parse_layer_kinds(std::string_view joined, std::string* unknown) {
  LayerKinds kinds;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = joined.find('+', start);
    const std::string_view part = joined.substr(start, plus == std::string_view::npos ? plus : plus - start);
    const auto kind = parse_kind(part);
    if (!kind) {
      if (unknown) *unknown = std::string(part);
      return std::nullopt;
    }
    kinds.push_back(*kind);
    if (plus == std::string_view::npos) return kinds;
    start = plus + 1;
  }
}

bool ModelSpec::uses(AttentionKind kind) const {
  for (const auto& layer : attention.pattern)
    for (AttentionKind k : layer)
      if (k == kind) return true;
  return false;
}

CpAlgorithm CpPlan::algorithm(AttentionKind kind) const {
  if (kind == AttentionKind::DENSE) return dense.algorithm;
  const auto it = algorithms.find(kind);
  return it != algorithms.end() ? it->second : attention_kind(kind).default_algorithm;
}

}  // namespace cpsim
