#pragma once
// Where each resolved input of a scenario came from: key path -> "catalog: <source>", "override",
// "profile: <file>", "hf_config <file>: <field>" or "default". Reports print it next to the
// numbers and the results store keeps it.
//
// A load gives every catalog field of the GPU, host, drive and model an entry whose text is the
// catalog's source for it. Built as strings, those entries were a fifth of a plan's instructions
// (5,760 loads: the source's lookup, "catalog: " + the source, a map node, then freeing them). A
// catalog entry here is a reference instead: the spec's sources as the load saw them (a shared
// SourceMap, which a later write to the spec's sources does not change) and the field's name; its
// text is made when it is read. Keys of catalog entries are the option table's paths, which live
// as long as the program; other entries own their key.
//
// Entries are kept in the order they were set; a later one for the same key replaces the earlier
// (as assignment to a map would). Reading by key scans from the latest; entries() gives them all
// as a map, sorted by key, for the store and the reports.
//
// A catalog entry points at its sources map, and the object keeps one share of each distinct map
// its entries read (a spec's: a handful). One share per entry was two atomic operations on the
// catalog's own counter per entry, for each of the two hundred entries of every load, copy and
// free of a scenario, on every thread of a plan at once; and an entry was 112 bytes, most of them
// the empty strings of the kind it was not.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/source_map.hpp"

namespace tiersim {

class Provenance {
 public:
  using Map = std::map<std::string, std::string>;

  // `key` gets `text` (an override, a profile, a default, ...).
  void set(std::string key, std::string text);
  // `key` reads as the catalog's source for `field` in `sources`: "catalog: <source>", the source
  // itself where it is a config.json's ("hf_config ..."), or "default" where there is none.
  // `key` and `field` must outlive every copy of this object (the option table's strings).
  void set_catalog(std::string_view key, const SourceMap& sources, const std::string& field);
  // Room for `n` entries in all (set and set_catalog then add without moving the others).
  void reserve(std::size_t n) { entries_.reserve(n); }
  // Removes every entry whose key starts with `prefix`.
  void erase_prefix(std::string_view prefix);

  // The text of `key`'s entry; nullopt where it has none.
  std::optional<std::string> source(std::string_view key) const;
  // As source(), for an entry that must be there (throws std::out_of_range otherwise).
  std::string at(std::string_view key) const;
  // Every entry by key, sorted, with its text.
  Map entries() const;
  // No key has an entry. (An entry not erased was set after every erase of its key: its key
  // has one.)
  bool empty() const {
    return std::none_of(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.erased; });
  }

  // How many keys have an entry.
  std::size_t size() const { return entries().size(); }

  friend bool operator==(const Provenance& a, const Provenance& b) {
    return a.entries() == b.entries();
  }
  // Against entries read back from the results store.
  friend bool operator==(const Provenance& a, const Map& b) { return a.entries() == b; }

 private:
  static constexpr std::uint32_t kNoText = ~std::uint32_t{0};
  struct Entry {
    std::string_view static_key;              // a catalog entry's key (the option table's path)
    const std::string* field = nullptr;       // a catalog entry's field; null for a text entry
    const SourceMap::Map* sources = nullptr;  // a catalog entry's sources (in sources_); null: none
    std::uint32_t text = kNoText;             // a text entry's key and text: texts_[text]
    bool erased = false;
  };
  struct Text {
    std::string key;
    std::string text;
  };
  std::string_view key(const Entry& e) const {
    return e.field ? e.static_key : std::string_view(texts_[e.text].key);
  }
  std::string read(const Entry& e) const;
  const Entry* latest(std::string_view key) const;
  std::vector<Entry> entries_;
  std::vector<Text> texts_;
  // A share of every sources map an entry points at, so that it outlives them (and a later write
  // to the spec's map copies it first, leaving this one as it was read).
  std::vector<std::shared_ptr<const SourceMap::Map>> sources_;
};

}  // namespace tiersim
