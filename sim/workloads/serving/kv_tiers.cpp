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

void BlockIndex::make_room_for_one() {
  if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
}

void BlockIndex::insert(std::uint64_t key, std::uint32_t value) {
  make_room_for_one();
  std::size_t i = home(key);
  while (slots_[i].value != kEmpty) i = (i + 1) & mask_;
  slots_[i] = Slot{key, value};
  ++size_;
}

std::uint32_t BlockIndex::find_or_insert(std::uint64_t key, std::uint32_t value, bool& inserted) {
  // Grown first, so that the probe below ends where the key goes.
  make_room_for_one();
  std::size_t i = home(key);
  for (; slots_[i].value != kEmpty; i = (i + 1) & mask_)
    if (slots_[i].key == key) {
      inserted = false;
      return slots_[i].value;
    }
  slots_[i] = Slot{key, value};
  ++size_;
  inserted = true;
  return value;
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

std::uint32_t LruList::add(std::uint32_t key, std::optional<std::uint32_t>& evicted) {
  std::uint32_t n = 0;
  if (nodes_.size() - 1 >= capacity_) {
    n = nodes_[0].prev;  // the least recently used node is reused for the new member
    unlink(n);
    evicted = nodes_[n].key;
  } else {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[n].key = key;
  push_front(n);
  return n;
}

KvHierarchy::KvHierarchy(std::size_t gpu_blocks, std::size_t host_blocks, std::size_t nvme_blocks,
                         bool write_back)
    : tiers_{LruList(gpu_blocks), LruList(host_blocks), LruList(nvme_blocks)},
      write_back_(write_back) {
  index_.reserve(
      std::min<std::size_t>(gpu_blocks + host_blocks + nvme_blocks, std::size_t(1) << 16));
}

bool KvHierarchy::touch(Tier t, std::uint32_t e) {
  const std::uint32_t n = entries_[e].node[t];
  if (n == LruList::kNoNode) return false;
  tiers_[t].touch(n);
  return true;
}

std::uint32_t KvHierarchy::insert(Tier t, std::uint32_t e) {
  if (tiers_[t].capacity() == 0) return e;
  if (touch(t, e)) return kNoEntry;
  std::optional<std::uint32_t> evicted;
  entries_[e].node[t] = tiers_[t].add(e, evicted);
  if (!evicted) return kNoEntry;
  const std::uint32_t out = *evicted;
  entries_[out].node[t] = LruList::kNoNode;
  dropped_.push_back(out);
  return out;
}

std::uint32_t KvHierarchy::entry_of(std::uint64_t hash) {
  const auto next =
      free_entries_.empty() ? static_cast<std::uint32_t>(entries_.size()) : free_entries_.back();
  bool inserted = false;
  const std::uint32_t e = index_.find_or_insert(hash, next, inserted);
  if (!inserted) return e;
  if (e == entries_.size())
    entries_.emplace_back();
  else
    free_entries_.pop_back();
  entries_[e] = Entry{};
  entries_[e].hash = hash;
  entries_[e].live = true;
  // Held by no tier yet: dropped again unless a tier takes it.
  dropped_.push_back(e);
  return e;
}

void KvHierarchy::release_dropped() {
  for (const std::uint32_t e : dropped_) {
    Entry& x = entries_[e];
    if (!x.live || x.node[kGpu] != LruList::kNoNode || x.node[kHost] != LruList::kNoNode ||
        x.node[kNvme] != LruList::kNoNode)
      continue;  // still held somewhere, or released already (listed twice)
    index_.erase(x.hash);
    x.live = false;
    free_entries_.push_back(e);
  }
  dropped_.clear();
}

KvHierarchy::Match KvHierarchy::match(const std::uint64_t* hashes, std::size_t n,
                                      bool nvme) const {
  Match m;
  for (std::size_t i = 0; i < n; ++i) {
    prefetch_ahead(hashes, i, n);
    const std::uint32_t* e = index_.find(hashes[i]);
    if (!e) break;
    if (held(kGpu, *e))
      ++m.gpu;
    else if (held(kHost, *e))
      ++m.host;
    else if (nvme && held(kNvme, *e))
      ++m.nvme;
    else
      break;
  }
  return m;
}

void KvHierarchy::take(const std::uint64_t* hashes, const Match& m) {
  for (std::size_t i = 0; i < m.blocks(); ++i) {
    prefetch_ahead(hashes, i, m.blocks());
    const std::uint32_t e = entry_of(hashes[i]);
    if (!touch(kGpu, e)) {
      if (!touch(kHost, e)) {
        touch(kNvme, e);
        to_host(e, false);  // staged through host DRAM on its way up; not a write down
      }
      to_gpu(e);
    }
    release_dropped();
  }
}

void KvHierarchy::computed(const std::uint64_t* hashes, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    prefetch_ahead(hashes, i, to);
    const std::uint32_t e = entry_of(hashes[i]);
    to_gpu(e);
    if (!write_back_) {
      if (tiers_[kHost].capacity() > 0 && !held(kHost, e)) to_host(e, true);
      if (tiers_[kNvme].capacity() > 0 && !held(kNvme, e)) to_nvme(e);
    }
    release_dropped();
  }
}

void KvHierarchy::to_gpu(std::uint32_t e) {
  const std::uint32_t evicted = insert(kGpu, e);
  if (evicted != kNoEntry && write_back_ && tiers_[kHost].capacity() > 0 && !touch(kHost, evicted))
    to_host(evicted, true);
}

void KvHierarchy::to_host(std::uint32_t e, bool count_write) {
  if (tiers_[kHost].capacity() == 0) return;
  if (count_write) ++writes_.host;
  const std::uint32_t evicted = insert(kHost, e);
  if (evicted != kNoEntry && write_back_ && tiers_[kNvme].capacity() > 0 && !touch(kNvme, evicted))
    to_nvme(evicted);
}

void KvHierarchy::to_nvme(std::uint32_t e) {
  if (tiers_[kNvme].capacity() == 0) return;
  ++writes_.nvme;
  insert(kNvme, e);
}

}  // namespace tiersim::sim
