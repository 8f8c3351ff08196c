// The cost of each step an instance runs (docs/serving.md, "Step costs"): a prefill (or a prefill chunk) of T new
// tokens after P cached ones, or a decode iteration of B requests at a mean context of L tokens, on a CP x TP
// instance. Costs are cpsim's own simulation of that step, at shapes on a fixed grid per CP degree, and linearly
// interpolated in between:
//   prefill T and P:  u * 2^(k/2) rounded up to a multiple of u (ratio sqrt 2: quadratic attention is within ~3%),
//                     P also 0; bilinear in (T, P); below the first point, the first point's cost;
//   decode L:         u * 2^k (decode is close to linear in the context); decode B: 1, 2, 4, ... ; bilinear in (B, L);
// with u = lcm(128, 2 cp), so that every grid length splits over the CP ranks and their zigzag halves. A shape on
// the grid costs exactly its simulation. The table is filled in two passes: the scheduler's demands name the grid
// shapes they need (need_*), the caller simulates the missing ones, then the lookups interpolate.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cpsim {

struct StepShape {
  enum class Kind : std::uint8_t { PREFILL, DECODE } kind = Kind::PREFILL;
  int cp = 1;
  bool pass_q = false;      // prefill: pass-Q instead of pass-KV; decode: pass-Q instead of the tree
  std::uint64_t tokens = 0; // prefill: new tokens T; decode: context L
  std::uint64_t cached = 0; // prefill: cached tokens P
  int batch = 1;            // decode: requests B
  auto tie() const { return std::tie(kind, cp, pass_q, tokens, cached, batch); }
  bool operator<(const StepShape& o) const { return tie() < o.tie(); }
  bool operator==(const StepShape& o) const { return tie() == o.tie(); }
  std::string key() const;  // "prefill cp4 pass-kv T=8192 P=0", "decode cp1 tree B=8 L=4096"
};

class StepCostTable {
 public:
  // The grid shapes a lookup of this demand interpolates between.
  void need_prefill(int cp, bool pass_q, std::uint64_t new_tokens, std::uint64_t cached_tokens);
  void need_decode(int cp, bool pass_q, int batch, std::uint64_t min_context, std::uint64_t max_context);
  std::vector<StepShape> missing() const;
  void set(const StepShape& shape, double t_s) { costs_[shape] = t_s; }

  double prefill_s(int cp, bool pass_q, std::uint64_t new_tokens, std::uint64_t cached_tokens) const;
  double decode_s(int cp, bool pass_q, int batch, double mean_context) const;
  const std::map<StepShape, double>& costs() const { return costs_; }

  static std::uint64_t grid_unit(int cp);
  // The grid points around x: lo <= x <= hi (lo == hi on a point or below the first one).
  struct Bracket {
    std::uint64_t lo, hi;
  };
  static Bracket prefill_bracket(int cp, double tokens);
  static Bracket decode_bracket(int cp, double context);
  static Bracket batch_bracket(double batch);

 private:
  double at(const StepShape& s) const;
  std::map<StepShape, double> costs_;  // simulated (or read back from the cache); NaN-free
  std::map<StepShape, bool> needed_;
};

}  // namespace cpsim
