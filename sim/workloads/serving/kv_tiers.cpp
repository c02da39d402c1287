#include "sim/workloads/serving/kv_tiers.hpp"

#include <algorithm>
#include <utility>

namespace tiersim::sim {

std::size_t BlockIndex::slot_of(std::uint64_t key) const {
  if (size_ == 0) return kNone;
  for (std::size_t i = home(key);; i = (i + 1) & mask_) {
    if (slots_[i].value == kEmpty) return kNone;
    if (slots_[i].key == key) return i;
  }
}

const std::uint32_t* BlockIndex::find(std::uint64_t key) const {
  const std::size_t i = slot_of(key);
  return i == kNone ? nullptr : &slots_[i].value;
}

void BlockIndex::reserve(std::size_t n) {
  // At most half full: linear probing's expected probe count stays under 2.5 for a miss.
  std::size_t want = 16;
  while (want < 2 * n) want *= 2;
  if (want > slots_.size()) rehash(want);
}

void BlockIndex::rehash(std::size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  mask_ = slots - 1;
  shift_ = 64;
  for (std::size_t s = slots; s > 1; s /= 2) --shift_;
  size_ = 0;
  for (const Slot& s : old)
    if (s.value != kEmpty) insert(s.key, s.value);
}

void BlockIndex::insert(std::uint64_t key, std::uint32_t value) {
  if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
  std::size_t i = home(key);
  while (slots_[i].value != kEmpty) i = (i + 1) & mask_;
  slots_[i] = Slot{key, value};
  ++size_;
}

void BlockIndex::erase(std::uint64_t key) {
  std::size_t i = slot_of(key);
  if (i == kNone) return;
  // Backward shift: move later members of the run into the hole when the hole lies between
  // their home slot and where they sit, so that every key stays reachable from its home.
  for (std::size_t j = (i + 1) & mask_; slots_[j].value != kEmpty; j = (j + 1) & mask_) {
    const std::size_t k = home(slots_[j].key);
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = Slot{};
  --size_;
}

LruBlockSet::LruBlockSet(std::size_t capacity_blocks) : capacity_(capacity_blocks), nodes_(1) {
  index_.reserve(std::min<std::size_t>(capacity_blocks, std::size_t(1) << 16));
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
  const std::uint32_t* n = index_.find(hash);
  if (!n) return false;
  unlink(*n);
  push_front(*n);
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
  index_.insert(hash, n);
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
