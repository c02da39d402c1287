#include "sim/engine/frame_pool.hpp"

#include <array>
#include <new>

namespace tiersim::sim::frame_pool {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooling = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooling = false;
#else
constexpr bool kPooling = true;
#endif
#else
constexpr bool kPooling = true;
#endif

constexpr std::size_t kStep = 64;
constexpr std::size_t kClasses = 64;  // frames up to 64 * 64 = 4 KiB
// A free list keeps at most this many frames; more are returned to the allocator, so a run that
// once had a burst of live frames does not hold that memory for the rest of the thread's life.
constexpr std::size_t kKeepPerClass = 4096;

struct FreeFrame {
  FreeFrame* next;
};

// One thread's free lists. Thread-local and private to this file: a cache of raw memory, never of
// simulation state, so results cannot depend on it.
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (auto& list : lists_)
      while (list.head) {
        FreeFrame* f = list.head;
        list.head = f->next;
        ::operator delete(f);
      }
  }
  void* take(std::size_t cls) {
    List& list = lists_[cls];
    if (!list.head) return ::operator new((cls + 1) * kStep);
    FreeFrame* f = list.head;
    list.head = f->next;
    --list.count;
    return f;
  }
  void give(void* p, std::size_t cls) noexcept {
    List& list = lists_[cls];
    if (list.count >= kKeepPerClass) {
      ::operator delete(p);
      return;
    }
    list.head = new (p) FreeFrame{list.head};
    ++list.count;
  }

 private:
  struct List {
    FreeFrame* head = nullptr;
    std::size_t count = 0;
  };
  std::array<List, kClasses> lists_{};
};

Pool& pool() {
  thread_local Pool p;
  return p;
}

std::size_t size_class(std::size_t bytes) {
  return bytes == 0 ? 0 : (bytes - 1) / kStep;
}

}  // namespace

void* allocate(std::size_t bytes) {
  const std::size_t cls = size_class(bytes);
  if (!kPooling || cls >= kClasses) return ::operator new(bytes);
  return pool().take(cls);
}

void deallocate(void* frame, std::size_t bytes) noexcept {
  const std::size_t cls = size_class(bytes);
  if (!kPooling || cls >= kClasses) {
    ::operator delete(frame);
    return;
  }
  pool().give(frame, cls);
}

}  // namespace tiersim::sim::frame_pool
