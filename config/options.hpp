#pragma once
// THE scenario option table (fio-style): every key a scenario file may contain is declared once,
// with its type, unit, range, default (or "required"), help text and the Scenario field it sets.
// Parsing, validation, `--set key.path=value`, resolved YAML and `tiersim schema` all read it.
//
// Adding a key is one row: a common key in build_table() (options.cpp), a workload's own key in
// its folder (sim/workloads/<name>/options.cpp, builders in config/option_rows.hpp), e.g.
//   t.push_back(only(integer("workload.nodes", 1, "1", "data-parallel nodes", F(training.nodes)),
//                    kTraining));
#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/catalog.hpp"
#include "config/spec_fields.hpp"
#include "config/yaml_reader.hpp"
#include "model/scenario.hpp"

namespace tiersim::config {

enum class ValueType {
  kInt,         // integer; `choices` (if any) lists the allowed values
  kNumber,      // real number
  kSize,        // bytes: 4096, 4KiB, 16MiB, 1GiB, 1.5GB
  kDuration,    // seconds, always written with a unit: 2s, 200ms, 50us, 1min
  kBool,        // true | false
  kText,        // non-empty text
  kChoice,      // one of `choices` (case-insensitive)
  kPlacement,   // a tier name from `choices`, or fractions {gpu: .., cpu: .., nvme: ..} summing to 1
  kPath,        // a file name, relative to the scenario file (to the working directory for --set)
  kReferences,  // list of {case, source, metric, value, approx}
};

// An enum member seen through its index in Option::choices.
struct EnumRef {
  std::function<void(int)> set;
  std::function<int()> get;
};
using FieldRef = std::variant<int*, double*, bool*, std::string*, Placement*, EnumRef,
                              std::vector<Reference>*>;

// Bit sets of workload kinds an option applies to.
unsigned kind_bit(WorkloadKind k);
inline constexpr unsigned kAllKinds = (1u << kWorkloadKindCount) - 1;
static_assert(kWorkloadKindCount < 32, "kinds are a bit set in an unsigned");

struct Option {
  std::string path;  // "workload.batch"
  ValueType type = ValueType::kNumber;
  std::string unit;
  double min = -kNoLimit;
  double max = kNoLimit;
  bool min_exclusive = false;
  std::vector<std::string> choices;
  std::string default_text;   // YAML text of the default; "" when required or optional
  bool required = false;      // must be given (for the workload kinds in `kinds`)
  bool from_catalog = false;  // absent: keeps the catalog entry's value
  bool omit_when_unset = false;  // optional without default: empty text / negative number = unset
  unsigned kinds = kAllKinds;    // workload kinds this key applies to
  std::string help;
  std::function<FieldRef(Scenario&)> field;  // the Scenario member the value goes to
  // Runs after the value was written (catalog lookups: replaces the spec by the catalog entry).
  std::function<void(Scenario&, const Catalog&)> resolve;
  // When set, the resolved YAML carries the key only where this holds: for keys that cannot
  // change the results otherwise (a key added later then leaves the resolved text, and so the
  // hash, of every scenario that does not use it as it was). Reading the resolved YAML back
  // gives the same value: the default, or the catalog's.
  std::function<bool(const Scenario&)> emit_when;
  // kSize only: the word `auto` is accepted too, stored as kAutoSize (a negative size) and written
  // back as `auto`; the workload resolves it from its memory model (workload.kv_host_cache).
  bool accepts_auto = false;
  // Keys of other workload kinds that mean what this one means here (serving's output_tokens is
  // inference's gen_tokens): a scenario that gives one of them under this option's kind is told
  // to use this key instead.
  std::vector<std::string> counterpart_of;
};

// What a size option that accepts `auto` holds for it (Option::accepts_auto).
inline constexpr double kAutoSize = -1.0;

// The table, in application order (catalog names before the fields that override them).
const std::vector<Option>& scenario_options();

// Options with this exact path (two when a key means different things per workload kind).
// Lookups go through an index built once with the table: every scenario load asks for every key.
const std::vector<const Option*>& find_options(const std::string& path);
// The one that applies to `kind`, or nullptr.
const Option* find_option(const std::string& path, WorkloadKind kind);

// Every section prefix ("hardware", "hardware.gpu", "policy.aio", ...).
bool is_section(const std::string& path);
// Keys directly below `prefix` ("" = top level), in table order, for "valid keys" messages.
const std::vector<std::string>& keys_below(const std::string& prefix);
// keys_below(prefix) without the keys that apply to no option of `kind` (a key whose rows are
// all for other kinds, a section none of whose keys is for it): what an unknown-key message
// lists once the workload kind is known, instead of every kind's keys; every key when `kind` is
// not known.
std::vector<std::string> keys_below(const std::string& prefix, std::optional<WorkloadKind> kind);
// The kind named `name` ("inference", ...), or nullopt when no kind has that name.
std::optional<WorkloadKind> workload_kind_named(const std::string& name);
// Workload kind names in enum order ("inference", "training", "checkpoint", "io").
const std::vector<std::string>& workload_kind_names();

// An option's value, typed as its Scenario field holds it: kInt -> int; kNumber, kSize,
// kDuration -> double (bytes, seconds); kBool -> bool; kText, kPath -> text; kChoice -> the index
// in `choices` (int); kPlacement -> Placement; kReferences -> the list. Studies decode a value
// once and set it on many scenarios (config/scenario_loader.hpp, Setting).
using OptionValue = std::variant<int, double, bool, std::string, Placement, std::vector<Reference>>;

// Reads `node` as the option's type, with every check and error message of the scenario loader.
OptionValue parse_option_value(const YNode& node, const Option& opt);
// The option's setter: writes a value of the option's type (parse_option_value) into `s`.
void set_option(const Option& opt, const OptionValue& value, Scenario& s);
// Reads `node` as the option's type (with its range checks) and writes it into `s`:
// set_option(opt, parse_option_value(node, opt), s).
void read_option(const YNode& node, const Option& opt, Scenario& s);
// The option's current value in `s` as YAML (canonical: reading it back gives the same value).
YAML::Node option_yaml(const Option& opt, Scenario& s);
// The same value's text when option_yaml gives a scalar (every type but a placement split over
// tiers and a reference list), without building a node: true and `text` set, else false.
bool option_scalar(const Option& opt, Scenario& s, std::string& text);
// True when the option is optional-without-default and `s` holds no value for it.
bool option_unset(const Option& opt, Scenario& s);

// Human-readable pieces for `tiersim schema`.
std::string type_text(const Option& opt);
std::string range_text(const Option& opt);
std::string default_text(const Option& opt);
std::string kinds_text(unsigned kinds);

// `tiersim schema` output: an aligned plain-text table, or a Markdown table.
std::string schema_text();
std::string schema_markdown();

}  // namespace tiersim::config
