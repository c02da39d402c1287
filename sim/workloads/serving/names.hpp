#pragma once
// The serving workload's own activities (sim/workloads/names.hpp has those it shares with the
// inference workload: compute, the weights' streams, the all-reduce, the KV copies to the host).
#include "sim/workloads/names.hpp"

namespace tiersim::sim {

namespace activity {
// The KV tiers of prefix caching (kv_tiers.hpp): cached prefix blocks loaded to the GPUs from
// host DRAM (over the host-to-GPU link) and from NVMe (the array's reads and their copies on over
// that link), and blocks copied down to host DRAM (the GPU-to-host link) and written to the
// drives. Their own work in the time breakdown, not the weights' streams or the CPU attention's
// copies, whose resources they share.
inline constexpr Activity kKvLoadHost{"kv-load-host"};
inline constexpr Activity kKvLoadNvme{"kv-load-nvme"};
inline constexpr Activity kKvStoreHost{"kv-store-host"};
inline constexpr Activity kKvStoreNvme{"kv-store-nvme"};
}  // namespace activity

}  // namespace tiersim::sim
