// Measures host<->device copy rates the way offloading runtimes move weights: pinned (DMA) and
// pageable (driver-staged) memory, per direction, for a range of transfer sizes. The numbers feed
// the GPU catalog (pcie_h2d_gbps, pcie_d2h_gbps) and the pageable-copy efficiency of the
// execution model. Build and run on a machine with a GPU:
//   nvcc -O2 -o copy_bandwidth copy_bandwidth.cu && ./copy_bandwidth
// Output: one line per (memory, direction, size): GB/s in 1e9 bytes per second.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t err_ = (x);                                                  \
    if (err_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(err_));        \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

static double time_copies(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                          int repeats) {
  CHECK(cudaMemcpy(dst, src, bytes, kind));  // warm-up
  CHECK(cudaDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) CHECK(cudaMemcpy(dst, src, bytes, kind));
  CHECK(cudaDeviceSynchronize());
  auto t1 = std::chrono::steady_clock::now();
  return double(bytes) * repeats / std::chrono::duration<double>(t1 - t0).count() / 1e9;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device %s, PCIe link gen %d? (see nvidia-smi), %zu MiB\n", prop.name, 0,
              prop.totalGlobalMem >> 20);
  const size_t max_bytes = size_t(1) << 30;
  void* dev = nullptr;
  CHECK(cudaMalloc(&dev, max_bytes));
  void* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, max_bytes));
  std::vector<char> pageable(max_bytes);
  std::memset(pinned, 1, max_bytes);
  std::memset(pageable.data(), 1, max_bytes);
  std::printf("memory,direction,bytes,gbps\n");
  for (size_t bytes = size_t(1) << 20; bytes <= max_bytes; bytes <<= 2) {
    const int repeats = int(std::max<size_t>(3, (size_t(4) << 30) / bytes));
    std::printf("pinned,h2d,%zu,%.2f\n", bytes,
                time_copies(dev, pinned, bytes, cudaMemcpyHostToDevice, repeats));
    std::printf("pinned,d2h,%zu,%.2f\n", bytes,
                time_copies(pinned, dev, bytes, cudaMemcpyDeviceToHost, repeats));
    std::printf("pageable,h2d,%zu,%.2f\n", bytes,
                time_copies(dev, pageable.data(), bytes, cudaMemcpyHostToDevice, repeats));
    std::printf("pageable,d2h,%zu,%.2f\n", bytes,
                time_copies(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost, repeats));
  }
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(dev));
  return 0;
}
