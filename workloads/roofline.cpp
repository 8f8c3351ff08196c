#include "workloads/roofline.hpp"

#include <algorithm>

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

double kernel_time_s(const GpuSpec& gpu, KernelClass kind, Dtype dtype, double flops, double hbm_bytes) {
  const double eff = kind == KernelClass::GEMM ? gpu.efficiency.gemm
                     : kind == KernelClass::ATTENTION ? gpu.efficiency.attention
                                                      : 1.0;
  const double t_math = kind == KernelClass::MEMORY ? 0.0 : flops / (peak_flops(gpu, dtype) * eff);
  const double t_mem = hbm_bytes / (gpu.hbm_bw_Bps * gpu.efficiency.memory);
  return std::max(t_math, t_mem);
}

}  // namespace cpsim
