#pragma once
// Recycled memory for coroutine frames. A simulation allocates and frees a frame per process and
// per awaited sub-task (a module fetch, an NVMe read, a layer's compute): tens of thousands per
// scenario. Through the general-purpose allocator that was about a quarter of a sweep point's CPU
// time (perf on bench/bench_sweep BM_SimulateLayers/80: malloc, free and their internals 23%),
// because many frames are alive at once and glibc's small per-thread cache overflows.
//
// Frames are recycled by size class (64-byte steps up to 4 KiB) on a per-thread free list, so
// concurrent sweeps on several threads share nothing. Larger frames go to operator new. Under
// AddressSanitizer the pool is off, so a use-after-free of a frame is still caught.
#include <cstddef>

namespace tiersim::sim::frame_pool {

// Memory for a frame of `bytes` bytes, aligned as operator new aligns.
void* allocate(std::size_t bytes);
// Returns memory from allocate(bytes), with the same `bytes`.
void deallocate(void* frame, std::size_t bytes) noexcept;

}  // namespace tiersim::sim::frame_pool
