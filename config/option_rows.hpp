#pragma once
// The builders of option table rows (config/options.hpp), shared by the common rows in
// config/options.cpp and the rows each workload contributes from its own folder
// (sim/workloads/<name>/options.cpp), so that a row reads the same wherever it is declared:
//   t.push_back(only(integer("workload.requests", 1, "1000", "requests to serve",
//                            F(serving.requests)), kServing));
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/options.hpp"

namespace tiersim::config {

// Writes `value` into an enum member through its index in the option's choices.
template <class E>
EnumRef enum_ref(E* p) {
  return EnumRef{[p](int i) { *p = static_cast<E>(i); }, [p] { return static_cast<int>(*p); }};
}

inline constexpr double kInf = kNoLimit;
// The kind bit of each workload (Option::kinds), named as its WorkloadKind enumerator (kServing,
// ...) and generated from sim/workloads/registry.def.
#define TIERSIM_WORKLOAD(Enumerator, name) \
  inline constexpr unsigned Enumerator = 1u << static_cast<unsigned>(WorkloadKind::Enumerator);
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD

// Small builders so that each table row stays one readable line.
inline Option opt(std::string path, ValueType type, std::string unit, std::string def, std::string help,
           std::function<FieldRef(Scenario&)> field) {
  Option o;
  o.path = std::move(path);
  o.type = type;
  o.unit = std::move(unit);
  o.default_text = std::move(def);
  o.help = std::move(help);
  o.field = std::move(field);
  return o;
}
inline Option range(Option o, double min, double max, bool min_exclusive = false) {
  o.min = min;
  o.max = max;
  o.min_exclusive = min_exclusive;
  return o;
}
inline Option choices(Option o, std::vector<std::string> c) {
  o.choices = std::move(c);
  return o;
}
inline Option required(Option o) {
  o.required = true;
  return o;
}
inline Option optional(Option o) {
  o.omit_when_unset = true;
  return o;
}
inline Option only(Option o, unsigned kinds) {
  o.kinds = kinds;
  return o;
}
inline Option resolving(Option o, std::function<void(Scenario&, const Catalog&)> r) {
  o.resolve = std::move(r);
  return o;
}

// Shorthands for the common shapes.
inline Option integer(std::string path, double min, std::string def, std::string help,
               std::function<FieldRef(Scenario&)> f) {
  return range(opt(std::move(path), ValueType::kInt, "", std::move(def), std::move(help),
                   std::move(f)),
               min, kInf);
}
inline Option number(std::string path, std::string unit, double min, double max, bool min_exclusive,
              std::string def, std::string help, std::function<FieldRef(Scenario&)> f) {
  return range(opt(std::move(path), ValueType::kNumber, std::move(unit), std::move(def),
                   std::move(help), std::move(f)),
               min, max, min_exclusive);
}
inline Option flag(std::string path, std::string def, std::string help,
            std::function<FieldRef(Scenario&)> f) {
  return opt(std::move(path), ValueType::kBool, "", std::move(def), std::move(help), std::move(f));
}
inline Option choice(std::string path, std::vector<std::string> names, std::string def, std::string help,
              std::function<FieldRef(Scenario&)> f) {
  return choices(opt(std::move(path), ValueType::kChoice, "", std::move(def), std::move(help),
                     std::move(f)),
                 std::move(names));
}

#define F(member) [](Scenario& s) -> FieldRef { return &s.member; }
#define E(member) [](Scenario& s) -> FieldRef { return enum_ref(&s.member); }


// The rows one workload contributes, by the section they go in: `workload` rows follow
// workload.kind and `policy` rows follow the common policy rows, each workload's in
// sim/workloads/registry.def order. A scenario's resolved YAML holds only the rows of its own
// kind, in table order, so the order between workloads changes no scenario.
struct WorkloadOptionRows {
  std::vector<Option> workload;
  std::vector<Option> policy;
};

// Each workload folder defines `<name>_option_rows` in sim/workloads/<name>/options.cpp (a
// workload with no keys of its own leaves both lists empty).
#define TIERSIM_WORKLOAD(Enumerator, name) void name##_option_rows(WorkloadOptionRows& rows);
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD

}  // namespace tiersim::config
