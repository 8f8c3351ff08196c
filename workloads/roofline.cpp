#include "workloads/roofline.hpp"

#include <algorithm>
#include <vector>
#include <cmath>

namespace cpsim {

int dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::FP8: return 1;
    case Dtype::FP32: return 4;
    default: return 2;
  }
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::FP8: return "fp8";
    case Dtype::FP16: return "fp16";
    case Dtype::FP32: return "fp32";
    default: return "bf16";
  }
}

double ModelSpec::layer_params() const {
  const double attn = double(d_model) * (q_width() + 2 * d_kv()) + double(q_width()) * d_model;
  const double ffn = 3.0 * d_model * ffn_dim;  // SwiGLU: gate, up, down
  return attn + ffn;
}

double peak_flops(const GpuSpec& gpu, Dtype dtype) {
  switch (dtype) {
    case Dtype::FP8: return gpu.fp8_flops;
    case Dtype::FP32: return gpu.bf16_flops / 2;  // TF32 tensor cores run at half the BF16 rate
    default: return gpu.bf16_flops;
  }
}

namespace {

// The seeds' roofline with a given compute efficiency (memory efficiency from the ideal table).
double ideal_time_s(const GpuSpec& gpu, KernelClass kind, Dtype dtype, double flops, double hbm_bytes) {
  const double eff = kind == KernelClass::GEMM ? gpu.efficiency.gemm
                     : kind == KernelClass::ATTENTION ? gpu.efficiency.attention
                                                      : 1.0;
  const double t_math = kind == KernelClass::MEMORY ? 0.0 : flops / (peak_flops(gpu, dtype) * eff);
  const double t_mem = hbm_bytes / (gpu.hbm_bw_Bps * gpu.efficiency.memory);
  return std::max(t_math, t_mem);
}

// Shaped: launch + max(flops / (peak * eff), bytes / (bw * memory)). eff <= 0 means a memory-only kernel.
double shaped_time_s(const GpuSpec& gpu, Dtype dtype, double eff, double flops, double hbm_bytes) {
  const KernelCalibration& c = gpu.kernels;
  const double t_math = eff > 0 && flops > 0 ? flops / (peak_flops(gpu, dtype) * eff) : 0.0;
  const double t_mem = hbm_bytes / (gpu.hbm_bw_Bps * c.memory);
  return c.launch_overhead_s + std::max(t_math, t_mem);
}

bool is_fp8(Dtype d) { return d == Dtype::FP8; }

// Fraction of the SMs a grid of `ctas` equal CTAs keeps busy over its waves: ctas / (ceil(ctas / SMs) * SMs).
double wave_fill(double ctas, int sms) {
  if (sms <= 0 || ctas <= 0) return 1;
  const double waves = std::ceil(ctas / sms);
  return ctas / (waves * sms);
}

}  // namespace

double kernel_time_s(const GpuSpec& gpu, KernelClass kind, Dtype dtype, double flops, double hbm_bytes) {
  if (!gpu.kernels.shaped) return ideal_time_s(gpu, kind, dtype, flops, hbm_bytes);
  const KernelCalibration& c = gpu.kernels;
  const double eff = kind == KernelClass::GEMM        ? (is_fp8(dtype) ? c.gemm_fp8 : c.gemm_bf16)
                     : kind == KernelClass::ATTENTION ? (is_fp8(dtype) ? c.attn_fp8 : c.attn_bf16)
                                                      : 0.0;
  return shaped_time_s(gpu, dtype, eff, flops, hbm_bytes);
}

double gemm_efficiency(const GpuSpec& gpu, Dtype dtype, double m, double n, double k) {
  const KernelCalibration& c = gpu.kernels;
  m = std::max(1.0, m), n = std::max(1.0, n), k = std::max(1.0, k);
  const double tm = c.gemm_tile_m, tn = c.gemm_tile_n;
  // Tile quantization (partial edge tiles compute whole) and wave quantization (the last wave leaves SMs idle):
  // useful m*n over waves * SMs * tile_m * tile_n. Equal to tiles / (waves * SMs) when m, n are tile multiples.
  const double tiles = std::ceil(m / tm) * std::ceil(n / tn);
  const double sms = std::max(1, gpu.sm_count);
  // Fewer output tiles than SMs (decode GEMVs, thin GEMMs): the library splits K over several CTAs per tile
  // (cuBLAS split-K, CUTLASS stream-K), at most one split per 256-deep slice of K.
  const double splits = std::clamp(std::floor(sms / tiles), 1.0, std::ceil(k / 256));
  const double waves = std::ceil(tiles * splits / sms);
  const double fill = (m * n) * splits / (waves * sms * tm * tn);
  const double k_factor = c.gemm_k_half > 0 ? k / (k + c.gemm_k_half) : 1.0;
  return (is_fp8(dtype) ? c.gemm_fp8 : c.gemm_bf16) * fill * k_factor;
}

namespace {

// FA3's split-KV heuristic (flash-attention hopper/heuristics.h, num_splits_heuristic): a grid below 80 % of the
// SMs splits each q tile's keys over several CTAs, the fewest splits whose wave efficiency is within 85 % of the
// best (at most 128, at most one per KV tile).
double kv_splits(double ctas, int sms, double kv_tiles) {
  if (ctas >= 0.8 * sms) return 1;
  const int max_splits = static_cast<int>(std::min({128.0, kv_tiles, double(sms)}));
  double best = 0;
  std::vector<double> fills;
  for (int k = 1; k <= std::max(1, max_splits); ++k) {
    fills.push_back(wave_fill(ctas * k, sms));
    best = std::max(best, fills.back());
  }
  for (int k = 1; k <= static_cast<int>(fills.size()); ++k)
    if (fills[k - 1] >= 0.85 * best) return k;
  return 1;
}

// Efficiency of one launch layout: `rows` query rows per (sequence, KV-head group) tile row, `heads` CTAs columns.
double attention_layout_efficiency(const GpuSpec& gpu, const AttentionShape& s, double rows, double heads) {
  const KernelCalibration& c = gpu.kernels;
  const double tq = c.attn_q_tile, tk = c.attn_kv_tile;
  const double lk = std::max(1.0, s.kv_tokens);
  const double nq = std::ceil(rows / tq);
  double ctas = nq * std::ceil(heads * std::max(1.0, s.batch));
  double useful = 0, cost = 0;  // per (sequence, head), in pairs of query-key work
  if (s.mask == Mask::FULL) {
    // Split-KV (flash-decoding) when the grid would not fill the SMs: `splits` CTAs share one q tile's keys,
    // each paying the per-CTA fixed cost.
    const double splits = kv_splits(ctas, gpu.sm_count, std::ceil(lk / tk));
    ctas *= splits;
    useful = rows * lk;
    cost = nq * tq * (std::ceil(lk / tk) * tk + splits * c.attn_lk_half_tokens);
  } else {
    // Causal, bottom-right aligned: q tile i sees keys [0, off + (i+1)*tq), off = kv - q; the last of its kv
    // tiles straddles the diagonal, computed whole and masked (1 + diag_extra tiles of cost).
    const double q = std::min(rows, lk), off = lk - q;
    useful = q * off + q * (q + 1) / 2;
    const double span = std::min(nq * std::ceil(lk / tk) * tk, nq * std::ceil(off / tk) * tk + tq * nq * (nq + 1) / 2);
    cost = tq * (span + nq * c.attn_lk_half_tokens + nq * c.attn_diag_extra * tk);
  }
  return wave_fill(ctas, gpu.sm_count) * useful / cost;
}

}  // namespace

double attention_efficiency(const GpuSpec& gpu, Dtype dtype, const AttentionShape& s) {
  const KernelCalibration& c = gpu.kernels;
  const double rows = std::max(1.0, s.q_tokens), heads = std::max(1.0, s.heads);
  double layout = attention_layout_efficiency(gpu, s, rows, heads);
  // GQA packing (FA3 pack_gqa): the query heads sharing a KV head become rows of one q tile column. Taken when it
  // lays the work out better (decode, short or few q blocks); causal masks keep per-head rows.
  if (s.group > 1 && (s.mask == Mask::FULL || rows < c.attn_q_tile))
    layout = std::max(layout, attention_layout_efficiency(gpu, s, rows * s.group, std::max(1.0, heads / s.group)));
  return (is_fp8(dtype) ? c.attn_fp8 : c.attn_bf16) * layout;
}

double gemm_time_s(const GpuSpec& gpu, Dtype dtype, double m, double n, double k, double hbm_bytes) {
  const double flops = 2 * m * k * n;
  if (!gpu.kernels.shaped) return ideal_time_s(gpu, KernelClass::GEMM, dtype, flops, hbm_bytes);
  return shaped_time_s(gpu, dtype, gemm_efficiency(gpu, dtype, m, n, k), flops, hbm_bytes);
}

double attention_time_s(const GpuSpec& gpu, Dtype dtype, const AttentionShape& shape, double flops,
                        double hbm_bytes) {
  if (!gpu.kernels.shaped) return ideal_time_s(gpu, KernelClass::ATTENTION, dtype, flops, hbm_bytes);
  return shaped_time_s(gpu, dtype, attention_efficiency(gpu, dtype, shape), flops, hbm_bytes);
}

double memory_time_s(const GpuSpec& gpu, double hbm_bytes) {
  if (!gpu.kernels.shaped) return ideal_time_s(gpu, KernelClass::MEMORY, Dtype::BF16, 0, hbm_bytes);
  return shaped_time_s(gpu, Dtype::BF16, 0, 0, hbm_bytes);
}

}  // namespace cpsim
