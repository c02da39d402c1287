#include "model/hardware.hpp"

#include <cstddef>
#include <iterator>

#include "model/errors.hpp"
#include "model/named_table.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"

namespace tiersim {

double pcie_link_gbps(int generation, int lanes) {
  // Per-lane payload rate after line encoding (8b/10b for Gen1-2, 128b/130b from Gen3).
  double per_lane = 0;
  switch (generation) {
    case 1: per_lane = 0.25; break;
    case 2: per_lane = 0.5; break;
    case 3: per_lane = 0.985; break;
    case 4: per_lane = 1.969; break;
    case 5: per_lane = 3.938; break;
    default: per_lane = generation > 5 ? 7.563 : 0.25; break;
  }
  return per_lane * lanes;
}

double gpu_memory_bytes(const GpuSpec& g) { return g.memory_mib * units::kMiB; }

double gpu_allocatable_bytes(const GpuSpec& g) {
  return (g.memory_mib - g.memory_reserved_mib) * units::kMiB;
}

namespace {

// PyTorch's default cuBLAS workspace: 4096 KiB x 2 + 16 KiB x 8 = 8.125 MiB before Hopper,
// 4096 KiB x 8 = 32 MiB on sm90 (aten/src/ATen/cuda/CublasHandlePool.cpp).
constexpr double kCublasDefaultBytes = (4096.0 * 2 + 16.0 * 8) * 1024;
constexpr double kCublasHopperBytes = 4096.0 * 8 * 1024;

const std::vector<GpuArchInfo>& arch_table() {
  // Resident threads per SM by compute capability (CUDA C++ Programming Guide, technical
  // specifications): 7.0 2048, 7.5 1024, 8.0 2048, 8.6 1536, 8.9 1536, 9.0 2048, 10.0 2048,
  // 12.0 1536. CDNA3 (MI300X): 2048 work-items per CU (AMD CDNA3 ISA / HIP programming guide:
  // 32 wavefronts of 64); the context model below is CUDA's, applied to it as an estimate.
  // Blackwell's cuBLAS workspace is taken as Hopper's (PyTorch's rule names sm90 only; an
  // estimate for sm100/sm120).
  static const std::vector<GpuArchInfo> kTable = {
      {"volta", 2048, kCublasDefaultBytes},         {"turing", 1024, kCublasDefaultBytes},
      {"ampere", 2048, kCublasDefaultBytes},        {"ampere-ga10x", 1536, kCublasDefaultBytes},
      {"ada", 1536, kCublasDefaultBytes},           {"hopper", 2048, kCublasHopperBytes},
      {"blackwell", 2048, kCublasHopperBytes},      {"blackwell-gb20x", 1536, kCublasHopperBytes},
      {"cdna3", 2048, kCublasDefaultBytes},
  };
  return kTable;
}

}  // namespace

const std::vector<std::string>& gpu_arch_names() {
  static const std::vector<std::string> kNames = entry_names(arch_table());
  return kNames;
}

const GpuArchInfo& gpu_arch_info(const std::string& arch) {
  return named_entry(arch_table(), arch, "GPU generation");
}

const char* to_string(Tier t) {
  switch (t) {
    case Tier::kGpu: return "gpu";
    case Tier::kCpu: return "cpu";
    case Tier::kNvme: return "nvme";
  }
  return "?";
}

const char* to_string(InputNote::Kind k) {
  switch (k) {
    case InputNote::Kind::kWarning: return "warning";
    case InputNote::Kind::kSource: return "source";
  }
  return "?";
}

const char* to_string(WorkloadKind k) {
  static const char* const kNames[] = {
#define TIERSIM_WORKLOAD(Enumerator, name) #name,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  };
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

}  // namespace tiersim
