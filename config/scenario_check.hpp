#pragma once
// A workload's own load-time checks: the rules between its keys (and between its keys and the
// hardware or model) that no single option's range can say. Each workload defines them in its
// folder (sim/workloads/<name>/checks.cpp, as `<name>_checks`); the scenario loader runs them
// through workload_checks(kind), after every option was read and resolved, and reports a failure
// with the file, line and key, as for any other error in the file.
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::config {

// What a check sees of the scenario being loaded.
class ScenarioCheck {
 public:
  virtual ~ScenarioCheck() = default;
  // The scenario with every option applied and resolved.
  virtual const Scenario& scenario() const = 0;
  // True when the file or a --set gave `path` (a default does not count).
  virtual bool given(const std::string& path) const = 0;
  // The given keys that start with `prefix`, in key order.
  virtual std::vector<std::string> given_under(const std::string& prefix) const = 0;
  // Throws ConfigError naming the file, the line of `path` (where it was given) and `path`.
  [[noreturn]] virtual void fail(const std::string& path, const std::string& message) const = 0;
  // A valid input whose results may not mean what they seem: a warning among the scenario's notes
  // (InputNote, model/scenario.hpp), which run, compare and the report print beside the results.
  virtual void warn(const std::string& path, const std::string& message) const = 0;
};

// A workload's checks, in two stages. `keys` runs before the parallel layout's rules
// (model/parallelism.hpp): the workload's own keys and what they need of the hardware. `layout`
// runs after them, for rules that assume a valid layout (micro-batches, data-parallel ranks).
// Either may be null.
struct WorkloadChecks {
  void (*keys)(const ScenarioCheck& check) = nullptr;
  void (*layout)(const ScenarioCheck& check) = nullptr;
};

// Each workload folder defines `<name>_checks` in sim/workloads/<name>/checks.cpp.
#define TIERSIM_WORKLOAD(Enumerator, name) extern const WorkloadChecks name##_checks;
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD

// The checks of `kind`, generated from sim/workloads/registry.def.
inline const WorkloadChecks& workload_checks(WorkloadKind kind) {
  static const WorkloadChecks* const kChecks[] = {
#define TIERSIM_WORKLOAD(Enumerator, name) &name##_checks,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  };
  return *kChecks[static_cast<std::size_t>(kind)];
}

}  // namespace tiersim::config
