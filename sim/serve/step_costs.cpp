#include "sim/serve/step_costs.hpp"

#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <stdexcept>

namespace cpsim {
namespace {

std::uint64_t round_up(double x, std::uint64_t unit) {
  return std::uint64_t(std::ceil(x / double(unit) - 1e-9)) * unit;
}

// The points of a geometric grid u * ratio^k (rounded up to multiples of u) around x.
template <class Point>
StepCostTable::Bracket bracket_of(double x, Point point) {
  std::uint64_t lo = point(0);
  if (x <= double(lo)) return {lo, lo};
  for (int k = 1;; ++k) {
    const std::uint64_t hi = point(k);
    if (x <= double(hi)) return {x == double(hi) ? hi : lo, hi};
    lo = hi;
  }
}

double lerp(double a, double b, double lo, double hi, double x) {
  return hi == lo ? a : a + (b - a) * (x - lo) / (hi - lo);
}

}  // namespace

std::string StepShape::key() const {
  if (kind == Kind::PREFILL)
    return fmt::format("prefill cp{} {} T={} P={}", cp, pass_q ? "pass-q" : "pass-kv", tokens, cached);
  return fmt::format("decode cp{} {} B={} L={}", cp, pass_q ? "pass-q" : "tree", batch, tokens);
}

std::uint64_t StepCostTable::grid_unit(int cp) { return std::lcm<std::uint64_t>(128, 2 * std::uint64_t(cp)); }

StepCostTable::Bracket StepCostTable::prefill_bracket(int cp, double tokens) {
  const std::uint64_t u = grid_unit(cp);
  return bracket_of(tokens, [u](int k) { return round_up(double(u) * std::pow(2.0, k / 2.0), u); });
}

StepCostTable::Bracket StepCostTable::decode_bracket(int cp, double context) {
  const std::uint64_t u = grid_unit(cp);
  return bracket_of(context, [u](int k) { return u << k; });
}

StepCostTable::Bracket StepCostTable::batch_bracket(double batch) {
  return bracket_of(batch, [](int k) { return std::uint64_t(1) << k; });
}

void StepCostTable::need_prefill(int cp, bool pass_q, std::uint64_t new_tokens, std::uint64_t cached_tokens) {
  pass_q = pass_q && cp > 1;  // one GPU passes nothing
  const Bracket t = prefill_bracket(cp, double(new_tokens));
  const Bracket p = cached_tokens == 0 ? Bracket{0, 0} : prefill_bracket(cp, double(cached_tokens));
  for (std::uint64_t T : {t.lo, t.hi})
    for (std::uint64_t P : {p.lo, p.hi})
      needed_[{StepShape::Kind::PREFILL, cp, pass_q, T, P, 1}] = true;
}

void StepCostTable::need_decode(int cp, bool pass_q, int batch, std::uint64_t min_context,
                                std::uint64_t max_context) {
  pass_q = pass_q && cp > 1;
  const Bracket b = batch_bracket(batch);
  const Bracket first = decode_bracket(cp, double(min_context)), last = decode_bracket(cp, double(max_context));
  for (std::uint64_t B : {b.lo, b.hi})
    for (std::uint64_t L = first.lo; L <= last.hi; L *= 2)
      needed_[{StepShape::Kind::DECODE, cp, pass_q, L, 0, int(B)}] = true;
}

std::vector<StepShape> StepCostTable::missing() const {
  std::vector<StepShape> out;
  for (const auto& [shape, _] : needed_)
    if (!costs_.count(shape)) out.push_back(shape);
  return out;
}

double StepCostTable::at(const StepShape& s) const {
  const auto it = costs_.find(s);
  if (it == costs_.end()) throw std::logic_error("step cost not simulated: " + s.key());
  return it->second;
}

double StepCostTable::prefill_s(int cp, bool pass_q, std::uint64_t new_tokens, std::uint64_t cached_tokens) const {
  pass_q = pass_q && cp > 1;
  const Bracket t = prefill_bracket(cp, double(new_tokens));
  const Bracket p = cached_tokens == 0 ? Bracket{0, 0} : prefill_bracket(cp, double(cached_tokens));
  const auto cost = [&](std::uint64_t T, std::uint64_t P) {
    return at({StepShape::Kind::PREFILL, cp, pass_q, T, P, 1});
  };
  const double T = std::max(double(new_tokens), double(t.lo)), P = std::max(double(cached_tokens), double(p.lo));
  const double at_p_lo = lerp(cost(t.lo, p.lo), cost(t.hi, p.lo), double(t.lo), double(t.hi), T);
  const double at_p_hi = lerp(cost(t.lo, p.hi), cost(t.hi, p.hi), double(t.lo), double(t.hi), T);
  return lerp(at_p_lo, at_p_hi, double(p.lo), double(p.hi), P);
}

double StepCostTable::decode_s(int cp, bool pass_q, int batch, double mean_context) const {
  pass_q = pass_q && cp > 1;
  const Bracket b = batch_bracket(batch);
  const Bracket l = decode_bracket(cp, mean_context);
  const auto cost = [&](std::uint64_t B, std::uint64_t L) {
    return at({StepShape::Kind::DECODE, cp, pass_q, L, 0, int(B)});
  };
  const double L = std::max(mean_context, double(l.lo));
  const double at_b_lo = lerp(cost(b.lo, l.lo), cost(b.lo, l.hi), double(l.lo), double(l.hi), L);
  const double at_b_hi = lerp(cost(b.hi, l.lo), cost(b.hi, l.hi), double(l.lo), double(l.hi), L);
  return lerp(at_b_lo, at_b_hi, double(b.lo), double(b.hi), double(batch));
}

}  // namespace cpsim
