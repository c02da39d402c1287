#pragma once
// The built-in tables of named entries (GPU generations in hardware.cpp, execution stacks in
// stack.cpp): their names in table order, and an entry by name, where an unknown name fails
// with the valid ones listed. One rule, so that every table answers alike.
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace tiersim {

// The `name` of each entry of `table`, in order.
template <class Entry>
std::vector<std::string> entry_names(const std::vector<Entry>& table) {
  std::vector<std::string> names;
  for (const auto& e : table) names.emplace_back(e.name);
  return names;
}

// The entry of `table` named `name` (exactly); otherwise ModelError "unknown WHAT 'NAME'; valid:
// A, B, ...".
template <class Entry>
const Entry& named_entry(const std::vector<Entry>& table, const std::string& name,
                         const std::string& what) {
  for (const auto& e : table)
    if (name == e.name) return e;
  std::string valid;
  for (const auto& n : entry_names(table)) valid += (valid.empty() ? "" : ", ") + n;
  throw ModelError("unknown " + what + " '" + name + "'; valid: " + valid);
}

}  // namespace tiersim
