#include "model/provenance.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace tiersim {

std::string Provenance::read(const Entry& e) const {
  if (!e.field) return texts_[e.text].text;
  if (!e.sources) return "default";
  const auto it = e.sources->find(*e.field);
  if (it == e.sources->end()) return "default";
  // A field read from a config.json says so itself (config/hf_config.cpp).
  return it->second.rfind("hf_config ", 0) == 0 ? it->second : "catalog: " + it->second;
}

void Provenance::set(std::string key, std::string text) {
  Entry& e = entries_.emplace_back();
  e.text = static_cast<std::uint32_t>(texts_.size());
  texts_.push_back({std::move(key), std::move(text)});
}

void Provenance::set_catalog(std::string_view key, const SourceMap& sources,
                             const std::string& field) {
  const SourceMap::Map* map = sources.raw();
  // Consecutive entries mostly read one spec's map: a short search, no share taken for them.
  if (map && std::none_of(sources_.rbegin(), sources_.rend(),
                          [&](const auto& kept) { return kept.get() == map; }))
    sources_.push_back(sources.shared());
  Entry& e = entries_.emplace_back();
  e.static_key = key;
  e.sources = map;
  e.field = &field;
}

void Provenance::erase_prefix(std::string_view prefix) {
  for (Entry& e : entries_)
    if (key(e).starts_with(prefix)) e.erased = true;
}

const Provenance::Entry* Provenance::latest(std::string_view wanted) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (key(*it) == wanted) return it->erased ? nullptr : &*it;
  return nullptr;
}

std::optional<std::string> Provenance::source(std::string_view key) const {
  const Entry* e = latest(key);
  if (!e) return std::nullopt;
  return read(*e);
}

std::string Provenance::at(std::string_view key) const {
  auto s = source(key);
  if (!s) throw std::out_of_range("no provenance entry for '" + std::string(key) + "'");
  return std::move(*s);
}

Provenance::Map Provenance::entries() const {
  Map out;
  // The latest entry of each key, as assignments to a map in this order would leave it.
  for (const Entry& e : entries_) {
    if (e.erased) {
      out.erase(std::string(key(e)));
      continue;
    }
    out.insert_or_assign(std::string(key(e)), read(e));
  }
  return out;
}

}  // namespace tiersim
