// Kernel time from a roofline: the slower of arithmetic (flops at the dtype's dense peak times the kernel class's
// efficiency) and memory (HBM bytes at HBM bandwidth times the memory efficiency). Efficiencies are per GPU preset
// (platforms/gpus.yaml); docs/model.md lists them with their sources.
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
double kernel_time_s(const GpuSpec& gpu, KernelClass kind, Dtype dtype, double flops, double hbm_bytes);

}  // namespace cpsim
