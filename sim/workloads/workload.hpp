#pragma once
// The workload extension point. A workload is a small ops table with capability flags (as fio's
// engines are: ioengines.h; the flags are in its traits, sim/workloads/traits.hpp), defined in
// its own folder sim/workloads/<name>/ and listed by one line in sim/workloads/registry.def.
// sim::simulate() finds the table for a scenario's workload.kind, runs it, and applies what the
// capability flags ask for; code that must treat workloads differently branches on capabilities,
// never on the name.
//
// sim/workloads/skeleton/ is a complete, registered and tested workload to copy.
#include <string>
#include <string_view>
#include <vector>

#include "model/capacity.hpp"
#include "model/perf.hpp"
#include "model/scenario.hpp"
#include "sim/result.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/traits.hpp"

namespace tiersim::sim {

// The most pieces (blocks, chunks) of one run's transfers, over all the processes that make them
// (`copies`: a checkpoint's writers): each piece costs a few events, about 0.4 us each, so this
// bounds a run to a few seconds (2^27 chunks, 8 writers of 512-byte buffers, took 50 s). 2^22
// pieces of 4 KiB are 16 GiB; a longer transfer in smaller pieces is a typo (1-byte buffers) or
// a scale the event-per-piece model cannot run.
inline constexpr double kMaxTransferPieces = 1 << 22;

// ceil(total_bytes / piece_bytes), at least 1, computed in double precision and checked (times
// `copies`) against kMaxTransferPieces before it becomes an int (2 TiB in 1 KiB blocks used to
// wrap an int and report 1.4e8 GB/s). Throws ModelError naming `key`, the option that sets the
// piece size.
int transfer_pieces(double total_bytes, double piece_bytes, const char* key, int copies = 1);

struct WorkloadOps {
  std::string_view name;     // workload.kind in a scenario file
  WorkloadKind kind;         // the enumerator generated from registry.def
  std::string_view summary;  // one line for `tiersim schema` and error messages
  // Simulates the scenario. Throws ModelError for a scenario the workload cannot express.
  RunResult (*run)(const Scenario& scenario, const SimOptions& options) = nullptr;
  // Optional, both or neither (sim/simulate.hpp simulate_like): the scenario keys `run` reads
  // only through the memory capacity report it puts in its result, for this scenario; and `run`'s
  // result for `scenario` from `twin`, its result for a scenario that differs only in those keys
  // and fits: the twin's with this scenario's capacity report (and, where that does not fit,
  // what `run` returns then).
  std::vector<std::string> (*capacity_only_keys)(const Scenario& scenario) = nullptr;
  RunResult (*with_capacity)(const Scenario& scenario, const SimOptions& options,
                             const RunResult& twin) = nullptr;
  // Optional: the memory check `run` makes before it simulates, alone (its result's memory and
  // fits), for the searches of configurations that fit (study/fit_search.hpp). Workloads of a
  // fixed batch or of ZeRO training have theirs in model/ and leave it null.
  CapacityReport (*capacity)(const Scenario& scenario, const ExecutionModel& em) = nullptr;

  // Its capability flags are in its traits (sim/workloads/traits.hpp), which the code outside
  // sim/ reads too.
  bool has(WorkloadCapability c) const { return workload_traits(kind).has(c); }
};

// Every registered workload, in registry.def order.
const std::vector<const WorkloadOps*>& workload_registry();
// The ops table of `kind`.
const WorkloadOps& workload_ops(WorkloadKind kind);
// By name; throws ModelError listing the valid names.
const WorkloadOps& find_workload(std::string_view name);

// Each workload folder defines its table as `<name>_workload` in this namespace.
namespace workloads {
#define TIERSIM_WORKLOAD(Enumerator, name) extern const WorkloadOps name##_workload;
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
}  // namespace workloads

}  // namespace tiersim::sim
