// The dense CP family beside ring: per-rank CP bytes per layer against each algorithm's closed form (derived by hand
// in the comments), and Ulysses' layer time against its closed form on one uncontended NVLink node.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cpsim;

namespace {

double cp_bytes_max(const test::Run& r) {
  REQUIRE(r.metrics.volumes.size() == 1);
  const auto& v = r.metrics.volumes[0];
  INFO(v.formula);
  REQUIRE(v.formula_bytes);
  CHECK(v.simulated_bytes == *v.formula_bytes);
  return v.simulated_bytes;
}

}  // namespace

TEST_CASE("ulysses: all-to-all of Q, K, V and O per rank", "[dense][ulysses][volume]") {
  // Llama-3-8B, S = 32K, N = 4: T = 8192 tokens, 32 query heads, 8 KV heads (2 per rank), d = 128, s = 2.
  // QKV: (N-1) * T * d * s * (32/4 + 2*2) ; O: (N-1) * T * d * s * 32/4  -> 3 * 8192 * 256 * (12 + 8)
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario,
                                                         {"model.layers=1", "cp.dense.algorithm=ulysses"}));
  CHECK(cp_bytes_max(r) == 3.0 * 8192 * 256 * 20);
}

TEST_CASE("usp: Ulysses in pairs, ring across the two pairs", "[dense][usp][volume]") {
  // N = 4, u = 2: QKV all-to-all (u-1) * T * d * s * (32/2 + 2*8/2) = 8192 * 256 * 24, O all-to-all 8192 * 256 * 16;
  // ring over N/u = 2 groups: 1 step of the pair's S/2 tokens' K and V for 4 KV heads: 16384 * 2 * 4 * 128 * 2.
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=1", "cp.dense.algorithm=usp", "cp.dense.ulysses_degree=2"}));
  CHECK(cp_bytes_max(r) == 8192.0 * 256 * (24 + 16) + 16384.0 * 2 * 4 * 128 * 2);
}

TEST_CASE("allgather: (N-1)/N * S * 2 * d_kv * s, as ring", "[dense][allgather][volume]") {
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario,
                                                         {"model.layers=1", "cp.dense.algorithm=allgather"}));
  CHECK(cp_bytes_max(r) == 3.0 * 8192 * 2 * 1024 * 2);
}

TEST_CASE("ulysses: one layer's time equals the closed form on NVLink", "[dense][ulysses][oracle]") {
  // Hand derivation (H100 roofline as in ring_attention_test): qkv GEMM, then a pairwise all-to-all of N-1 = 3
  // steps in which every port carries one flow each way (no sharing): 3 * (2 us + pair / 450 GB/s), pair =
  // T*d*s*(8 + 2*2); full causal attention of S queries on 8 heads (S(S+1)/2 pairs, 2 KV heads read); the O
  // all-to-all 3 * (2 us + T*d*s*8 / 450 GB/s); o_proj and the SwiGLU FFN.
  const double S = 32768, T = 8192, d = 128, s = 2, peak = 989e12, hbm = 3.35e12 * 0.8, lat = 2e-6, bw = 450e9;
  auto t = [&](double flops, double bytes, double eff) { return std::max(flops / (peak * eff), bytes / hbm); };
  auto gemm = [&](double k, double n) { return t(2 * T * k * n, (k * n + T * k + T * n) * s, 0.75); };
  const double attn = t(4 * (S * (S + 1) / 2) * 8 * d, (2 * S * 8 + 2 * S * 2) * d * s, 0.6);
  const double a2a_qkv = 3 * (lat + T * d * s * 12 / bw), a2a_out = 3 * (lat + T * d * s * 8 / bw);
  const double expected =
      gemm(4096, 6144) + a2a_qkv + attn + a2a_out + gemm(4096, 4096) + gemm(4096, 2 * 14336) + gemm(14336, 4096);
  const test::Run r = test::simulate(test::scenario_from(test::kSmallScenario,
                                                         {"model.layers=1", "cp.dense.algorithm=ulysses"}));
  CHECK(r.metrics.makespan_s == Approx(expected).epsilon(1e-6));
}

TEST_CASE("pass-q prefill: Q hops and one all-to-all of partials, bytes of the closed form", "[dense][pass-q][volume]") {
  // N = 4, S = 32K (T = 8192 per rank), 96K cached; q_w = 32 heads x 128 = 4096, s = 2.
  // Q hops: (N-1) * T * q_w * s; partials back in the all-to-all: (N-1) * T * (q_w * s + 4 * 32).
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=1", "cp.dense.algorithm=pass-q", "run.cached_tokens=96K"}));
  CHECK(cp_bytes_max(r) == 3.0 * 8192 * 4096 * 2 + 3.0 * 8192 * (4096 * 2 + 4 * 32));
}

TEST_CASE("pass-q prefill: double-buffered Q hops hide behind attention; only the all-to-all is exposed",
          "[dense][pass-q][oracle]") {
  // Hand derivation (ideal H100 as in the Ulysses oracle). A Q hop (T * q_w * s = 64 MiB, 151 us on NVLink) is far
  // shorter than a step's attention (~6.5 ms), and hop k only waits for hop k-1 and the receiver's attention of
  // step k-2, so each hop ends before the receiver finishes step k-1: the four attention steps run back to back.
  // Step 0 (own Q): zigzag diagonal, chunks of m = 4096: two half-masked chunks m(m+1)/2 plus one full m^2 = m(2m+1)
  // pairs; steps 1..3: half of the M^2 = T^2 pairs (zigzag off-diagonal). Every step adds the 96K/4 = 24576 cached
  // tokens fully: + T * 24576 pairs, and reads Q, O (2 T q_w) and T + 24576 tokens of K, V (2 x 1024 wide).
  // Then the pairwise all-to-all of the partials, 3 steps of (2 us + T (q_w s + 128) / 450 GB/s), the merge (a
  // memory pass over 4 partials), o_proj and the FFN.
  const double T = 8192, m = 4096, cached = 24576, d = 128, s = 2, peak = 989e12, hbm = 3.35e12 * 0.8, lat = 2e-6,
               bw = 450e9;
  auto t = [&](double flops, double bytes, double eff) { return std::max(flops / (peak * eff), bytes / hbm); };
  auto gemm = [&](double k, double n) { return t(2 * T * k * n, (k * n + T * k + T * n) * s, 0.75); };
  auto attn = [&](double pairs) {
    return t(4 * pairs * 32 * d, (2 * T * 4096 + 2 * (T + cached) * 1024) * s, 0.6);
  };
  const double partial = T * (4096 * s + 4 * 32);
  const double attention = attn(m * (2 * m + 1) + T * cached) + 3 * attn(T * T / 2 + T * cached);
  const double expected = gemm(4096, 6144) + attention + 3 * (lat + partial / bw) + 4 * partial / hbm +
                          gemm(4096, 4096) + gemm(4096, 2 * 14336) + gemm(14336, 4096);
  const test::Run r = test::simulate(test::scenario_from(
      test::kSmallScenario, {"model.layers=1", "cp.dense.algorithm=pass-q", "run.cached_tokens=96K"}));
  CHECK(r.metrics.makespan_s == Approx(expected).epsilon(1e-6));
}
