#pragma once
// The KV cache hierarchy of a serving replica: prefix blocks on the GPU, in host DRAM and on NVMe,
// each tier an LRU set of block hashes (prefix_stream.hpp) with a capacity in blocks.
//
// What the modelled systems do (and what is kept of it here):
//   - vLLM (automatic prefix caching, V1): blocks of 16 tokens by default (block_size); a freed
//     block keeps its hash and stays reusable until it is reallocated; free blocks are reused
//     least recently freed first, an LRU (vllm/v1/core/block_pool.py, FreeKVCacheBlockQueue).
//     At most prompt - 1 tokens come from the cache: the last token is always computed
//     (vllm/v1/core/kv_cache_manager.py, get_computed_blocks).
//   - LMCache: chunks of 256 tokens (chunk_size default), stored to its CPU backend when vLLM
//     computes them and evicted LRU (LMCache docs, configuration: chunk_size, local_cpu,
//     max_local_cpu_size); a local disk backend below it.
//   - SGLang HiCache: GPU (L1), host (L2, --hicache-ratio or --hicache-size) and storage (L3);
//     pages of --page-size tokens (64 in its best-practice guide); --hicache-write-policy
//     write_through (the documented setting), write_through_selective or write_back; the radix
//     tree evicts least recently used leaves (SGLang docs, "HiCache System Design", "HiCache Best
//     Practices").
//   - NVIDIA Dynamo KVBM: device (G1), pinned host (G2) and local disk (G3) pools of the engine's
//     blocks, blocks offloaded from G1 to G2 to G3 and onboarded back on a hit (Dynamo docs, KV
//     Block Manager).
// The hierarchy here: a hit anywhere in the prefix is served from the highest tier that holds it
// and brought to the GPU; write_through copies each computed block to every lower tier at once,
// write_back copies a block down only when the tier above evicts it. Tiers are inclusive where
// the writes make them so and need not be; each evicts its least recently used block.
// Every operation is O(1) per block: one hash map from a block to its entry, which names the
// block's node in each tier's intrusive doubly linked list, so one lookup serves every tier.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tiersim::sim {

// A map from a block hash to a 32-bit value, open addressing with linear probing and
// backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm R). The KV tiers look up every
// block of every prompt; a node-based std::unordered_map spent most of a multi-turn run in its
// lookups, allocations and frees. Keys may be any 64-bit value (a trace's block ids are small
// integers), so each is scrambled by Fibonacci hashing before it picks a slot.
class BlockIndex {
 public:
  std::size_t size() const { return size_; }
  // The value stored for `key`, or nullptr.
  const std::uint32_t* find(std::uint64_t key) const;
  // Adds `key` -> `value`; `key` must be absent.
  void insert(std::uint64_t key, std::uint32_t value);
  // The value stored for `key`; where it is absent, `value` is stored for it first (one probe
  // for both). `inserted` says which.
  std::uint32_t find_or_insert(std::uint64_t key, std::uint32_t value, bool& inserted);
  // Removes `key` if present.
  void erase(std::uint64_t key);
  // Room for `n` keys without growing.
  void reserve(std::size_t n);
  // Asks the CPU to start loading the slot where a probe for `key` begins: a hint that changes
  // nothing. A large hierarchy's index does not fit in the caches, so a probe waits for memory;
  // loops over a request's blocks issue this a few blocks ahead (KvHierarchy), which took about
  // 4% off a multi-turn capacity search.
  void prefetch(std::uint64_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = kEmpty;
  };
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  // The slot holding `key`, or kNone: the probe find and erase share.
  static constexpr std::size_t kNone = ~std::size_t(0);
  std::size_t slot_of(std::uint64_t key) const;
  void rehash(std::size_t slots);
  // Grows the table where one more key would fill it past half, as insertions need.
  void make_room_for_one();
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

// The recency order of one tier: an intrusive doubly linked list of at most `capacity` members,
// each a key the owner gives (the hierarchy's entry number), most recent first. It finds nothing
// by key: its owner keeps each member's node.
class LruList {
 public:
  static constexpr std::uint32_t kNoNode = 0;  // node 0 is the sentinel
  explicit LruList(std::size_t capacity) : capacity_(capacity), nodes_(1) {}
  std::size_t capacity() const { return capacity_; }
  // Makes `node` the most recent.
  void touch(std::uint32_t node) {
    unlink(node);
    push_front(node);
  }
  // Adds `key` as the most recent and returns its node. When the list is full, the least recent
  // member leaves first and its key is returned in `evicted` (its node is reused). Needs
  // capacity > 0.
  std::uint32_t add(std::uint32_t key, std::optional<std::uint32_t>& evicted);

 private:
  struct Node {
    std::uint32_t key = 0;
    std::uint32_t prev = 0, next = 0;
  };
  void unlink(std::uint32_t n) {
    Node& x = nodes_[n];
    nodes_[x.prev].next = x.next;
    nodes_[x.next].prev = x.prev;
  }
  void push_front(std::uint32_t n) {
    Node& x = nodes_[n];
    x.prev = 0;
    x.next = nodes_[0].next;
    nodes_[x.next].prev = n;
    nodes_[0].next = n;
  }
  std::size_t capacity_;
  // nodes_[0] is the sentinel: next = most, prev = least recent. A node is only ever reused, never
  // freed, so the list holds nodes_.size() - 1 members.
  std::vector<Node> nodes_;
};

class KvHierarchy {
 public:
  // Capacities in blocks; 0 = no such tier.
  KvHierarchy(std::size_t gpu_blocks, std::size_t host_blocks, std::size_t nvme_blocks,
              bool write_back);

  struct Match {
    std::size_t gpu = 0, host = 0, nvme = 0;  // blocks of the prefix found in each tier
    std::size_t blocks() const { return gpu + host + nvme; }
  };
  // The longest prefix of hashes[0, n) held by some tier (without `nvme`: by the GPU or host
  // DRAM, stopping at the first block only the NVMe tier holds); changes nothing.
  Match match(const std::uint64_t* hashes, std::size_t n, bool nvme = true) const;
  // A request takes its matched prefix: each block is touched where it was found and brought to
  // the GPU (an NVMe hit passes through host DRAM and stays there).
  void take(const std::uint64_t* hashes, const Match& m);
  // Blocks [from, to) are on the GPU, newly computed or released by a finished request (most
  // recently used now). Write-through copies them down.
  void computed(const std::uint64_t* hashes, std::size_t from, std::size_t to);

  struct Writes {
    long host = 0;  // blocks copied GPU -> host DRAM
    long nvme = 0;  // blocks copied host DRAM -> NVMe
  };
  // The copies down since the last call.
  Writes take_writes() {
    Writes w = writes_;
    writes_ = {};
    return w;
  }

 private:
  enum Tier : std::size_t { kGpu = 0, kHost = 1, kNvme = 2 };
  static constexpr std::uint32_t kNoEntry = 0xffffffffu;
  // A block some tier holds: its hash and its node in each tier's list (LruList::kNoNode where
  // that tier does not hold it). The lists' keys are entry numbers, so an eviction finds the
  // evicted block's entry without a lookup.
  struct Entry {
    std::uint64_t hash = 0;
    std::uint32_t node[3] = {LruList::kNoNode, LruList::kNoNode, LruList::kNoNode};
    bool live = false;  // in the index (false: on the free list)
  };
  bool held(Tier t, std::uint32_t e) const { return entries_[e].node[t] != LruList::kNoNode; }
  bool touch(Tier t, std::uint32_t e);
  // Adds entry `e` to tier `t` as its most recent block (or touches it there) and returns the
  // entry the tier evicted for it: kNoEntry when none; `e` itself when the tier has no capacity.
  std::uint32_t insert(Tier t, std::uint32_t e);
  // The entry of `hash`, made (held by no tier yet) where there is none.
  std::uint32_t entry_of(std::uint64_t hash);
  // Entries that may have left every tier: dropped once the block in hand is done, so that none
  // is reused while a cascade of evictions still names it.
  void release_dropped();
  // Starts loading where the lookup of block i + kPrefetchAhead begins (when it is before `end`):
  // each block's lookup is independent of the next block's, so their memory waits overlap
  // instead of coming one after another.
  static constexpr std::size_t kPrefetchAhead = 8;
  void prefetch_ahead(const std::uint64_t* hashes, std::size_t i, std::size_t end) const {
    if (i + kPrefetchAhead < end) index_.prefetch(hashes[i + kPrefetchAhead]);
  }
  void to_gpu(std::uint32_t e);
  void to_host(std::uint32_t e, bool count_write);
  void to_nvme(std::uint32_t e);
  LruList tiers_[3];
  BlockIndex index_;  // hash -> entry
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_entries_;
  std::vector<std::uint32_t> dropped_;
  bool write_back_;
  Writes writes_;
};

}  // namespace tiersim::sim
