// Kernel time from a roofline: the slower of arithmetic (flops at the dtype's dense peak times an achieved
// efficiency) and memory (HBM bytes at an achieved fraction of HBM bandwidth).
//   ideal machine (!gpu.kernels.shaped): one fixed efficiency per kernel class (gpus.yaml `efficiency:`), no
//     overheads: kernel_time_s below, the seeds' formula.
//   shaped (platform.calibration: default): the efficiency follows the kernel's shape (GEMM tile and wave
//     quantization, FlashAttention-3's size curve and causal tiles) and every kernel pays a launch overhead.
// docs/calibration.md "Kernels" gives every formula and the source of every constant.
#pragma once
#include "platforms/platform_spec.hpp"
#include "workloads/model.hpp"

namespace cpsim {

enum class KernelClass { GEMM, ATTENTION, MEMORY };

// One kernel's roofline time and the work behind it.
struct KernelCost {
  double duration_s = 0;
  double flops = 0;
  double hbm_bytes = 0;
};

double peak_flops(const GpuSpec& gpu, Dtype dtype);
// A kernel of class `kind` without shape: ideal, the class's fixed efficiency; shaped, the class's large-kernel
// efficiency plus the launch overhead.
double kernel_time_s(const GpuSpec& gpu, KernelClass kind, Dtype dtype, double flops, double hbm_bytes);

// The attention mask of one kernel call, per (sequence, head):
//   FULL             every query sees every key (non-causal; an off-diagonal ring block)
//   CAUSAL_DIAGONAL  query i of q sees keys [0, kv - q + i] (bottom-right aligned, FlashAttention's causal=True):
//                    the diagonal tiles are computed whole and cost extra for the mask
enum class Mask { FULL, CAUSAL_DIAGONAL };

// One attention kernel call: q_tokens queries and kv_tokens keys per sequence, over `heads` query heads of
// `batch` sequences; `group` query heads share a KV head (packed into one q tile when the queries are few).
struct AttentionShape {
  double q_tokens = 1;
  double kv_tokens = 1;
  double heads = 1;
  double batch = 1;
  Mask mask = Mask::FULL;
  double group = 1;
};

// Achieved / peak of a shaped kernel (1 = the peak).
double gemm_efficiency(const GpuSpec& gpu, Dtype dtype, double m, double n, double k);
double attention_efficiency(const GpuSpec& gpu, Dtype dtype, const AttentionShape& shape);

// (m x k) * (k x n): 2*m*k*n flops, `hbm_bytes` moved.
double gemm_time_s(const GpuSpec& gpu, Dtype dtype, double m, double n, double k, double hbm_bytes);
// `flops` the useful work of the call (4 per visible pair and head dim); the shape sets the efficiency.
double attention_time_s(const GpuSpec& gpu, Dtype dtype, const AttentionShape& shape, double flops,
                        double hbm_bytes);
double memory_time_s(const GpuSpec& gpu, double hbm_bytes);

}  // namespace cpsim
