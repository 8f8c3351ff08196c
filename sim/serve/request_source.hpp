// The requests of a serving run (docs/serving.md, "Request sources"): generated from seeded arrivals and length
// distributions, or read from a trace file. The generator is cpsim's own (splitmix64 seeding xoshiro256**, inverse
// transforms), not <random>'s distributions, whose algorithms differ between standard libraries: the same seed gives
// the same requests everywhere.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/serve/serve_spec.hpp"

namespace cpsim {

struct Request {
  int id = 0;
  double arrival_s = 0;
  std::uint64_t prompt_tokens = 0;  // the whole prompt, cached prefix included
  std::uint64_t cached_tokens = 0;  // its prefix already in the KV cache (not recomputed)
  std::uint64_t output_tokens = 1;  // generated tokens, the first one by the prefill
};

// Sorted by arrival (ties by id). A trace row that cannot be read is an InputError at "file:line:col".
std::vector<Request> make_requests(const RequestSourceSpec& spec);

// A deterministic generator: uniform doubles in [0, 1) with 53 random bits.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  double uniform();   // [0, 1)
  double normal();    // standard normal (Box-Muller)
  double gamma(double shape);  // Marsaglia-Tsang, mean = shape
 private:
  std::uint64_t s_[4];
};

}  // namespace cpsim
