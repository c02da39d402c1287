#pragma once
// Where each number of a catalog entry came from: field name -> source text. A source that starts
// with "estimate" marks a value derived by calculation rather than published.
//
// A catalog entry's sources are long texts, and every scenario load copies the entries it uses
// (the GPU, host, drive and model specs): a plan of 5,760 points copied and freed each entry's
// sources map node by node, about a fifth of its instructions. The map is therefore shared
// between copies and copied only when one of them changes it (an override, a config.json):
// reading is as a std::map's, writing goes through operator[] or edit().
#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>

namespace tiersim {

class SourceMap {
 public:
  using Map = std::map<std::string, std::string>;
  using const_iterator = Map::const_iterator;
  using value_type = Map::value_type;

  SourceMap() = default;
  SourceMap(std::initializer_list<value_type> entries) : map_(std::make_shared<Map>(entries)) {}

  // Reading. (No non-const begin() or end(): an iterator taken before a write would point into
  // the map the write left behind.)
  const_iterator begin() const { return map().begin(); }
  const_iterator end() const { return map().end(); }
  const_iterator find(const std::string& field) const { return map().find(field); }
  std::size_t count(const std::string& field) const { return map().count(field); }
  const std::string& at(const std::string& field) const { return map().at(field); }
  std::size_t size() const { return map().size(); }
  bool empty() const { return map().empty(); }
  const Map& map() const { return map_ ? *map_ : empty_map(); }
  // The map itself, shared (null while empty): a reader that keeps it sees it as it is now, since
  // a later write gives this copy a map of its own (model/provenance.hpp's catalog entries).
  std::shared_ptr<const Map> shared() const { return map_; }
  // The map shared() would give, without taking a share of it (null while empty).
  const Map* raw() const { return map_.get(); }
  friend bool operator==(const SourceMap& a, const SourceMap& b) { return a.map() == b.map(); }

  // Writing: this copy gets a map of its own first, if it shares one.
  std::string& operator[](const std::string& field) { return edit()[field]; }
  Map& edit() {
    if (!map_)
      map_ = std::make_shared<Map>();
    else if (map_.use_count() > 1)
      map_ = std::make_shared<Map>(*map_);
    else  // the last owner: what others read before they let go happens before this write
      std::atomic_thread_fence(std::memory_order_acquire);
    return *map_;
  }

 private:
  static const Map& empty_map() {
    static const Map kEmpty;
    return kEmpty;
  }
  std::shared_ptr<Map> map_;
};

}  // namespace tiersim
