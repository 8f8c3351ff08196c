// How GPU kernels achieve their peaks (platforms/gpus.yaml `kernels:`, docs/calibration.md "Kernels"): per-kernel
// launch overhead, GEMM tile and wave quantization, a FlashAttention-3 size curve and causal-tile penalty, and the
// achieved HBM fraction. Pure data; workloads/roofline.cpp holds the formulas.
#pragma once

namespace cpsim {

struct KernelCalibration {
  // false: the ideal machine (GpuSpec::efficiency only, no overheads). read_platform sets it for non-ideal
  // calibrations; GpuSpecs built directly by tests stay unshaped.
  bool shaped = false;
  int version = 0;                 // gpus.yaml kernels_version the table was written for
  double launch_overhead_s = 0;    // added once per kernel
  double graph_launch_overhead_s = 0;  // the same inside a CUDA graph (decode steps are captured and replayed)
  // GEMM (cuBLAS/CUTLASS): output tiles of tile_m x tile_n, one CTA per SM per wave.
  int gemm_tile_m = 128;
  int gemm_tile_n = 256;
  double gemm_bf16 = 0.78;         // achieved / dense peak for large, well-shaped GEMMs
  double gemm_fp8 = 0.65;
  double gemm_k_half = 0;          // small-K penalty K / (K + k_half); 0 = none
  // Attention (FlashAttention-3 forward): eff = eff_max * wave(q tiles x heads x batch) * Lk_eff / (Lk_eff + lk_half)
  // with causal tiles computed whole and diagonal tiles costing 1 + diag_extra tiles.
  int attn_q_tile = 128;
  int attn_kv_tile = 128;
  double attn_bf16 = 0.68;         // eff_max, non-causal
  double attn_fp8 = 0.53;
  double attn_lk_half_tokens = 162;  // per-CTA fixed cost, in KV tokens of work
  double attn_diag_extra = 0.62;     // extra cost of a masked diagonal tile, in tiles
  // Memory-bound kernels.
  double memory = 0.85;            // achieved / peak HBM bandwidth
};

}  // namespace cpsim
