#pragma once
// The fields of the hardware and model structs, declared once: the catalog reader, the scenario
// option table (inline overrides such as `hardware.gpu.memory_mib: 40960`) and `tiersim catalog
// --json` all iterate these lists, so adding a field to a spec is a one-line change here.
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "config/yaml_reader.hpp"
#include "model/hardware.hpp"
#include "model/llm.hpp"

namespace tiersim::config {

inline constexpr double kNoLimit = std::numeric_limits<double>::max();

template <class T>
struct SpecField {
  using Member = std::variant<double T::*, int T::*, bool T::*, std::string T::*, FfnKind T::*>;
  const char* name;
  Member member;
  const char* unit;  // "" for dimensionless
  double min;
  double max;
  bool min_exclusive;  // true: value must be > min
  const char* help;
};

const std::vector<SpecField<GpuSpec>>& gpu_fields();
const std::vector<SpecField<HostSpec>>& host_fields();
const std::vector<SpecField<NvmeSpec>>& drive_fields();
const std::vector<SpecField<LlmSpec>>& llm_fields();

// "mlp" / "gated".
const std::vector<std::string>& ffn_kind_names();

// Type names for the schema ("number", "integer", "bool", "text", "mlp|gated").
template <class T>
std::string field_type_name(const SpecField<T>& f) {
  return std::visit(
      [](auto m) -> std::string {
        using M = decltype(m);
        if constexpr (std::is_same_v<M, double T::*>) return "number";
        if constexpr (std::is_same_v<M, int T::*>) return "integer";
        if constexpr (std::is_same_v<M, bool T::*>) return "bool";
        if constexpr (std::is_same_v<M, std::string T::*>) return "text";
        return "mlp|gated";
      },
      f.member);
}

template <class T>
bool field_is_numeric(const SpecField<T>& f) {
  return std::holds_alternative<double T::*>(f.member) ||
         std::holds_alternative<int T::*>(f.member);
}

// Reads `node` into `obj.*f.member` with the field's type and range checks.
template <class T>
void read_field(const YNode& node, const SpecField<T>& f, T& obj) {
  std::visit(
      [&](auto m) {
        using M = decltype(m);
        if constexpr (std::is_same_v<M, double T::*>) {
          obj.*m = node.as_double(f.min, f.max, f.min_exclusive);
        } else if constexpr (std::is_same_v<M, int T::*>) {
          const double lo = f.min_exclusive ? f.min + 1 : f.min;
          const double hi = f.max >= 2e9 ? 2e9 : f.max;
          obj.*m = static_cast<int>(node.as_int(static_cast<long long>(lo),
                                                static_cast<long long>(hi)));
        } else if constexpr (std::is_same_v<M, bool T::*>) {
          obj.*m = node.as_bool();
        } else if constexpr (std::is_same_v<M, std::string T::*>) {
          obj.*m = node.as_string();
        } else {
          const std::string s = to_lower(node.scalar("mlp or gated"));
          if (s == "mlp") obj.*m = FfnKind::kMlp;
          else if (s == "gated") obj.*m = FfnKind::kGated;
          else node.fail("expected mlp or gated, got " + node.describe() +
                         did_you_mean(s, ffn_kind_names()));
        }
      },
      f.member);
}

// The field's value as canonical YAML scalar text.
template <class T>
std::string field_text(const SpecField<T>& f, const T& obj) {
  return std::visit(
      [&](auto m) -> std::string {
        using M = decltype(m);
        // An else chain: without it every branch is compiled for every member type.
        if constexpr (std::is_same_v<M, double T::*>) return format_number(obj.*m);
        else if constexpr (std::is_same_v<M, int T::*>)
          return std::to_string(obj.*m);
        else if constexpr (std::is_same_v<M, bool T::*>)
          return obj.*m ? "true" : "false";
        else if constexpr (std::is_same_v<M, std::string T::*>)
          return obj.*m;
        else
          return obj.*m == FfnKind::kGated ? "gated" : "mlp";
      },
      f.member);
}

}  // namespace tiersim::config
