#include "model/provenance.hpp"

#include <stdexcept>
#include <utility>

namespace tiersim {

std::string Provenance::Entry::read() const {
  if (!field) return text;
  if (!sources) return "default";
  const auto it = sources->find(*field);
  if (it == sources->end()) return "default";
  // A field read from a config.json says so itself (config/hf_config.cpp).
  return it->second.rfind("hf_config ", 0) == 0 ? it->second : "catalog: " + it->second;
}

void Provenance::set(std::string key, std::string text) {
  Entry& e = entries_.emplace_back();
  e.owned_key = std::move(key);
  e.text = std::move(text);
}

void Provenance::set_catalog(std::string_view key, const SourceMap& sources,
                             const std::string& field) {
  Entry& e = entries_.emplace_back();
  e.static_key = key;
  e.sources = sources.shared();
  e.field = &field;
}

void Provenance::erase_prefix(std::string_view prefix) {
  for (Entry& e : entries_)
    if (e.key().starts_with(prefix)) e.erased = true;
}

const Provenance::Entry* Provenance::latest(std::string_view key) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->key() == key) return it->erased ? nullptr : &*it;
  return nullptr;
}

std::optional<std::string> Provenance::source(std::string_view key) const {
  const Entry* e = latest(key);
  if (!e) return std::nullopt;
  return e->read();
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
      out.erase(std::string(e.key()));
      continue;
    }
    out.insert_or_assign(std::string(e.key()), e.read());
  }
  return out;
}

}  // namespace tiersim
