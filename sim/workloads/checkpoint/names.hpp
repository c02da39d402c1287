#pragma once
// The checkpoint workload's own resources and activities, used by training's periodic
// checkpoints and the replay's checkpoint writer (replay/ckpt_writer.cpp) too.
#include "sim/workloads/names.hpp"

namespace tiersim::sim {

namespace resource {
// One writer's GPU-to-host copy and its CPU thread. Neither is charged by the power model: the
// CPU model charges all sockets busy (ResourceRole::kCpu), which one writer's thread is not, and
// the copies' bytes are not counted as DRAM traffic (writer 0 in training copies over the
// training's own pcie-d2h link, whose bytes are).
inline constexpr ResourceKind kCkptD2h{"ckpt-d2h", ResourceRole::kOther};
inline constexpr ResourceKind kCkptThread{"ckpt-thread", ResourceRole::kOther};
// This node's link to network storage, and the storage servers' aggregate bandwidth.
inline constexpr ResourceKind kStorageClient{"storage-client", ResourceRole::kNetwork};
inline constexpr ResourceKind kStorageServers{"storage-servers", ResourceRole::kNetwork};
}  // namespace resource

namespace activity {
inline constexpr Activity kCheckpointWrite{"checkpoint-write"};
inline constexpr Activity kCkptPickleSource{"ckpt-pickle-source"};
inline constexpr Activity kCkptD2hPageable{"ckpt-d2h-pageable"};
inline constexpr Activity kCkptStagingCopy{"ckpt-staging-copy"};
inline constexpr Activity kCkptRead{"ckpt-read"};
inline constexpr Activity kCkptSerialiseWrite{"ckpt-serialise-write"};
inline constexpr Activity kCkptD2hPinned{"ckpt-d2h-pinned"};
inline constexpr Activity kCkptCopy{"ckpt-copy"};
}  // namespace activity

}  // namespace tiersim::sim
