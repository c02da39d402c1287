#include "sim/workloads/serving/kv_tiers.hpp"

namespace tiersim::sim {

LruBlockSet::LruBlockSet(std::size_t capacity_blocks) : capacity_(capacity_blocks), nodes_(1) {
  index_.reserve(std::min<std::size_t>(capacity_blocks, std::size_t(1) << 20));
}

void LruBlockSet::unlink(std::uint32_t n) {
  Node& x = nodes_[n];
  nodes_[x.prev].next = x.next;
  nodes_[x.next].prev = x.prev;
}

void LruBlockSet::push_front(std::uint32_t n) {
  Node& x = nodes_[n];
  x.prev = 0;
  x.next = nodes_[0].next;
  nodes_[x.next].prev = n;
  nodes_[0].next = n;
}

bool LruBlockSet::touch(std::uint64_t hash) {
  const auto it = index_.find(hash);
  if (it == index_.end()) return false;
  unlink(it->second);
  push_front(it->second);
  return true;
}

std::optional<std::uint64_t> LruBlockSet::insert(std::uint64_t hash) {
  if (capacity_ == 0) return hash;
  if (touch(hash)) return std::nullopt;
  std::optional<std::uint64_t> evicted;
  std::uint32_t n = 0;
  if (index_.size() >= capacity_) {
    n = nodes_[0].prev;  // the least recently used node is reused for the new block
    unlink(n);
    evicted = nodes_[n].hash;
    index_.erase(nodes_[n].hash);
  } else if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[n].hash = hash;
  push_front(n);
  index_.emplace(hash, n);
  return evicted;
}

KvHierarchy::KvHierarchy(std::size_t gpu_blocks, std::size_t host_blocks, std::size_t nvme_blocks,
                         bool write_back)
    : gpu_(gpu_blocks), host_(host_blocks), nvme_(nvme_blocks), write_back_(write_back) {}

KvHierarchy::Match KvHierarchy::match(const std::uint64_t* hashes, std::size_t n,
                                      bool nvme) const {
  Match m;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    if (gpu_.contains(h))
      ++m.gpu;
    else if (host_.contains(h))
      ++m.host;
    else if (nvme && nvme_.contains(h))
      ++m.nvme;
    else
      break;
  }
  return m;
}

void KvHierarchy::take(const std::uint64_t* hashes, const Match& m) {
  for (std::size_t i = 0; i < m.blocks(); ++i) {
    const std::uint64_t h = hashes[i];
    if (gpu_.touch(h)) continue;
    if (!host_.touch(h)) {
      nvme_.touch(h);
      to_host(h, false);  // staged through host DRAM on its way up; not a write down
    }
    to_gpu(h);
  }
}

void KvHierarchy::computed(const std::uint64_t* hashes, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    const std::uint64_t h = hashes[i];
    to_gpu(h);
    if (!write_back_) {
      if (host_.capacity() > 0 && !host_.contains(h)) to_host(h, true);
      if (nvme_.capacity() > 0 && !nvme_.contains(h)) to_nvme(h);
    }
  }
}

void KvHierarchy::to_gpu(std::uint64_t h) {
  const auto evicted = gpu_.insert(h);
  if (evicted && write_back_ && host_.capacity() > 0 && !host_.touch(*evicted))
    to_host(*evicted, true);
}

void KvHierarchy::to_host(std::uint64_t h, bool count_write) {
  if (host_.capacity() == 0) return;
  if (count_write) ++writes_.host;
  const auto evicted = host_.insert(h);
  if (evicted && write_back_ && nvme_.capacity() > 0 && !nvme_.touch(*evicted)) to_nvme(*evicted);
}

void KvHierarchy::to_nvme(std::uint64_t h) {
  if (nvme_.capacity() == 0) return;
  ++writes_.nvme;
  nvme_.insert(h);
}

}  // namespace tiersim::sim
