#pragma once
// The engine's own vocabulary: what role a resource plays for energy, what its work counts, what
// a piece of work is called and which part of a run it serves. The nouns of the workloads (a
// checkpoint writer's thread, a storage server, "weights-nvme") are not here: a workload names
// its resources and activities itself (sim/workloads/names.hpp for those several workloads share,
// sim/workloads/<kind>/names.hpp for its own), and observers such as energy (sim/economics.cpp)
// see a resource only by its role, never by its name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tiersim::sim {

// What part of the node's power a resource's busy time stands for. Energy attaches by role, as an
// observer of typed resources (the way SimGrid's host energy plugin observes hosts): the GPU
// power model charges gpu resources, the CPU model cpu resources, the drive model nvme
// resources; the bytes over the host's PCIe links count as DRAM traffic. Two PCIe roles because
// a link's rate, at which its busy time turns into bytes, differs by direction (model/perf.hpp
// h2d_gbps, d2h_gbps).
enum class ResourceRole : std::uint8_t {
  kGpu,      // GPU kernel time (one resource may stand for several GPUs in lockstep)
  kCpu,      // the host CPUs, all sockets busy
  kPcieH2d,  // a GPU's PCIe link, host memory to GPU: its bytes pass through host DRAM
  kPcieD2h,  // a GPU's PCIe link, GPU to host memory
  kNvme,     // the NVMe array (RAID-0): every drive transfers while it is busy
  kNetwork,  // a link between GPUs or nodes, or to remote storage: no power term of its own
  kOther,    // anything else the power model does not charge
};
inline constexpr std::size_t kResourceRoleCount =
    static_cast<std::size_t>(ResourceRole::kOther) + 1;
const char* to_string(ResourceRole role);  // "gpu", "cpu", "pcie-h2d", "pcie-d2h", "nvme", ...

// What a workload gives Engine::add_resource: the role, and the name the resource is shown by
// (run --json, traces, the results store), which the workload makes.
struct ResourceSpec {
  ResourceRole role = ResourceRole::kOther;
  std::string name;
};

// What a resource's `amount` counts.
enum class WorkUnit : std::uint8_t {
  kSeconds,  // the rate is 1 per second: amounts are service seconds
  kBytes,    // the rate is bytes per second
};
const char* to_string(WorkUnit unit);  // "s", "bytes"

// What a busy interval was spent on (trace spans): a name the workload declares once, as a
// constant (sim/workloads/names.hpp), and the engine carries without knowing the list. Equal when
// the names are. The default is untagged work, "".
class Activity {
 public:
  constexpr Activity() = default;
  // `name` must outlive every use (a string literal): spans keep the pointer.
  constexpr explicit Activity(const char* name) : name_(name) {}
  constexpr const char* name() const { return name_; }
  friend bool operator==(Activity a, Activity b) {
    return std::string_view(a.name_) == std::string_view(b.name_);
  }

 private:
  const char* name_ = "";
};
// The trace name ("weights-nvme", "compute", ...); stable output like a resource's name.
inline const char* to_string(Activity activity) {
  return activity.name();
}

// The part of a run a piece of work belongs to, for energy by phase (sim/economics.cpp): an
// inference or serving workload tags its work with the pass it serves; other work has none.
enum class Stage : std::uint8_t {
  kNone,     // not part of a prefill or decode pass (training, checkpoints, the io benchmark)
  kPrefill,  // the prompt's forward pass (inference pass 0; serving iterations of prompt chunks)
  kDecode,   // generating tokens
};
inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::kDecode) + 1;

}  // namespace tiersim::sim
