// The seed's numbers (heterogeneous-attention-cp.md): every row of its quantitative table and every worked example,
// from the closed forms cpsim uses. Oracle: the seed's text, quoted beside each assertion (MB in the seed = MiB).
#include <catch2/catch.hpp>

#include "sim/report/volume_table.hpp"
#include "workloads/attention/block_selection.hpp"
#include "workloads/attention/registry.hpp"

using namespace cpsim;

namespace {
constexpr double MiB = 1024.0 * 1024.0, KiB = 1024.0;

// By the names the seed's tables use; "<algorithm>-backward" names a training backward pass.
ModeVolume mode(const CommParams& p, const char* kind, std::string algorithm, const MobaCpPlan& sel = {}) {
  const std::string suffix = "-backward";
  const bool backward = algorithm.size() > suffix.size() && algorithm.ends_with(suffix);
  if (backward) algorithm.resize(algorithm.size() - suffix.size());
  REQUIRE(parse_kind(kind));
  REQUIRE(kCpAlgorithmNames.parse(algorithm));
  const auto v = mode_volume(p, *parse_kind(kind), *kCpAlgorithmNames.parse(algorithm), sel, backward);
  REQUIRE(v);
  return *v;
}
}  // namespace

TEST_CASE("volumes: every row of the seed's unified-parameter table", "[volumes][seed]") {
  // S=128K, N=4, d_c=512 (c_kv = 2 KiB/token), d_model=7168, n_h=128, d_head=128, B=1, BF16.
  CommParams p = volume_preset_params("seed");
  CHECK(p.c_kv() == 2048);
  CHECK(*mode(p, "dense", "ring").seed_bytes == 256 * MiB);                       // Dense ring 256 MB, 100%
  const ModeVolume dsa = mode(p, "dsa", "allgather");                              // 192 MB (KV) + 1344 MB (hidden)
  CHECK(dsa.bytes == 192 * MiB + 1344 * MiB);
  CHECK(*dsa.seed_bytes == dsa.bytes);
  p.n_win = 4096;
  CHECK(mode(p, "swa", "boundary").bytes == 8 * MiB);                              // SWA 4096: 8 MB, 3.1%
  p.n_win = 128;
  CHECK(mode(p, "swa", "boundary").bytes == 256 * KiB);                            // SWA 128: 256 KB, 0.1%
  CHECK(mode(p, "hca", "allgather").bytes == 1.5 * MiB);                           // HCA(C128): 1.5 MB, 0.6%
  CHECK(*mode(p, "csa", "select-gather").seed_bytes == 1 * MiB);                   // CSA k=512: 1 MB, 0.4%
  CHECK(*mode(p, "dsa", "select-gather").seed_bytes == 4 * MiB);                   // DSA k=2048: 4 MB, 1.6%
  CHECK(*mode(p, "moba", "gather").seed_bytes == 8 * MiB + 0.375 * MiB);           // MoBA: 8 MB + ~0.4 MB, 3.2%
  CHECK(*mode(p, "linear", "lasp2").seed_bytes == 3 * MiB);                        // LASP-2, H=128: 3 MB, 1.2%
  // The shares of the seed's table, from its own dense-ring row (256 MB).
  const VolumeTable t = volume_table("seed", volume_preset_params("seed"));
  for (const auto& row : t.rows) {
    if (row.label == "SWA (n_win=4096)") CHECK(*row.seed_share_of_dense_ring == Approx(0.03125));
    if (row.label == "HCA(C128) compressed dense, AllGather") CHECK(*row.seed_share_of_dense_ring == Approx(0.00586).epsilon(1e-3));
    if (row.label == "Linear attention state (LASP-2, H=n_h)") CHECK(*row.seed_share_of_dense_ring == Approx(0.0117).epsilon(1e-2));
  }
}

TEST_CASE("volumes: the seed's worked examples", "[volumes][seed]") {
  // Mistral-7B SWA (GQA d_kv=1024, S=128K, N=4, BF16): 16 MB at n_win=4096, 0.5 MB at n_win=128.
  CommParams mistral = volume_preset_params("mistral-swa");
  CHECK(mode(mistral, "swa", "boundary").bytes == 16 * MiB);
  mistral.n_win = 128;
  CHECK(mode(mistral, "swa", "boundary").bytes == 0.5 * MiB);

  CommParams p = volume_preset_params("seed");
  // CSA(C4) at S=1M, N=4: 3/4 x 256K x 2 x 512 x 2 = 384 MB.
  p.S = 1048576;
  CHECK(mode(p, "csa", "allgather").bytes == 384 * MiB);
  // DSA at S=64K: (3/4) x 65536 x 8192 x 2 = 768 MB per layer.
  p.S = 65536;
  CHECK(mode(p, "dsa", "allgather").bytes == 768 * MiB);
  // HCA at S=128K, m'=128: (3/4) x 1024 x 1024 x 2 = 1.5 MB.
  p.S = 131072;
  CHECK(mode(p, "hca", "allgather").bytes == 1.5 * MiB);
  // MoBA (S=128K, B=512, d_kv=1024, BF16, N=4): centroids (3/4) x 256 x 1024 x 2 = 0.375 MB; blocks
  // 8 x 512 x 2 x 1024 x 2 = 16 MB (the seed's count, all selected blocks).
  CHECK(*mode(mistral, "moba", "gather").seed_bytes == 0.375 * MiB + 16 * MiB);
  // cpsim moves the remote 3/4 of the blocks under uniform selection: 12 MB + 0.375 MB.
  CHECK(mode(mistral, "moba", "gather").bytes == 0.375 * MiB + 12 * MiB);
  // LASP-2 with H=32, d=128, BF16, N=4: (3/4) x 32 x 128^2 x 2 = 0.75 MB (the seed's formula); an AllGather of every
  // rank's full 1 MiB state delivers 3 of them: 3 MiB.
  CHECK(*mode(mistral, "linear", "lasp2").seed_bytes == 0.75 * MiB);
  CHECK(mode(mistral, "linear", "lasp2").bytes == 3 * MiB);
}

TEST_CASE("volumes: LASP-2 is independent of S while the ring grows linearly", "[volumes]") {
  CommParams p = volume_preset_params("seed");
  p.S = 131072;
  const double lasp_128k = mode(p, "linear", "lasp2").bytes, ring_128k = mode(p, "dense", "ring").bytes;
  p.S = 2097152;
  CHECK(mode(p, "linear", "lasp2").bytes == lasp_128k);
  CHECK(mode(p, "dense", "ring").bytes == 16 * ring_128k);  // 2M / 128K = 16
}

TEST_CASE("block selection: counts are whole, sum to k, and follow the distribution", "[volumes][moba]") {
  MobaCpPlan uniform;
  CHECK(selections_per_owner(8, 4, 2, uniform) == std::vector<int>{2, 2, 2, 2});
  CHECK(selections_per_owner(6, 4, 0, uniform) == std::vector<int>{2, 2, 1, 1});  // remainders to lower ranks
  MobaCpPlan recency{BlockSelection::RECENCY};
  CHECK(selections_per_owner(8, 4, 0, recency) == std::vector<int>{8, 0, 0, 0});  // causal: only itself
  // rank 2 weights 1/4, 1/2, 1 over ranks 0..2: 8 x (1/7, 2/7, 4/7) = 1.14, 2.29, 4.57 -> 1, 2, 5
  CHECK(selections_per_owner(8, 4, 2, recency) == std::vector<int>{1, 2, 5, 0});
  MobaCpPlan skewed{BlockSelection::SKEWED, 0.5, 0};
  // hot rank 0 holds 1/2 + 1/8 of the 8 blocks = 5, the others 1 each
  CHECK(selections_per_owner(8, 4, 3, skewed) == std::vector<int>{5, 1, 1, 1});
}
