// What the io workload declares to the code outside its folder (sim/workloads/traits.hpp).
#include "sim/workloads/traits.hpp"

namespace tiersim {

namespace {

// The transfer's buffer, not policy.io_path, says whether reads bypass host DRAM.
bool gpu_direct(const Scenario& s) {
  return s.io.buffer == IoWorkload::Buffer::kGpuDirect;
}

}  // namespace

const WorkloadTraits io_traits{kCapEnergyAndCost, &gpu_direct,
                               [](const Scenario&) -> std::string_view { return "I/O"; }};

}  // namespace tiersim
