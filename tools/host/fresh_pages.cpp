// Measures what torch.save pays for copying each GPU storage into a freshly allocated CPU storage:
// the kernel faulting in (and zeroing) every page of a new large allocation on first touch, and
// unmapping it on free. Compares a memcpy into fresh malloc()ed memory with one into memory
// already touched, for the storage sizes of a transformer checkpoint (large allocations are
// mmap()ed by glibc, so every one starts with untouched pages). The fault-in rate is what a host
// entry's page_fault_gbps takes (scenarios/catalog/hosts.yaml; without one, the host's
// virtual_machine label picks ExecutionModel's guest or bare-metal figure, model/perf.hpp
// fresh_pages_s, which every fresh allocation in the simulator goes through, torch.save's storages
// included). Say in the entry's source whether the machine measured was a VM. Build and run:
//   g++ -O2 -o fresh_pages fresh_pages.cpp && ./fresh_pages
// Output: one line per size; rates in 1e9 bytes per second, costs in seconds per 1e9 bytes;
// page_fault_gbps = 1 / fault_in_s_per_gb, fresh_allocation_gbps = 1 / (fault-in + free).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  const int repeats = 9;
  volatile unsigned char sink = 0;  // keeps the copies into fresh memory observable
  std::printf(
      "size_mib copy_touched_gbps copy_fresh_gbps fault_in_s_per_gb free_s_per_gb "
      "page_fault_gbps fresh_allocation_gbps\n");
  for (std::size_t mib : {38, 100, 200, 400}) {
    const std::size_t n = mib << 20;
    std::vector<unsigned char> source(n, 1), touched(n, 2);
    std::vector<double> warm, fresh, release;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      std::memcpy(touched.data(), source.data(), n);
      warm.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      auto* d = static_cast<unsigned char*>(std::malloc(n));
      if (!d) return 1;
      std::memcpy(d, source.data(), n);
      fresh.push_back(seconds_since(t0));
      sink = static_cast<unsigned char>(sink + d[n / 2] + d[n - 1]);
      t0 = std::chrono::steady_clock::now();
      std::free(d);
      release.push_back(seconds_since(t0));
    }
    const double gb = double(n) / 1e9;
    const double fault_s = std::max(median(fresh) - median(warm), 0.0) / gb;
    const double free_s = median(release) / gb;
    std::printf("%8zu %17.2f %15.2f %17.3f %13.3f %15.2f %21.2f\n", mib, gb / median(warm),
                gb / median(fresh), fault_s, free_s, fault_s > 0 ? 1.0 / fault_s : 0.0,
                1.0 / (fault_s + free_s));
  }
  return sink == 255 ? 2 : 0;
}
