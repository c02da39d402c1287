#include <cmath>
#include <cstdio>

#include "model/errors.hpp"
#include "sim/workloads/workload.hpp"

namespace tiersim::sim {

int transfer_pieces(double total_bytes, double piece_bytes, const char* key, int copies) {
  const double pieces = std::ceil(total_bytes / piece_bytes);
  if (!(piece_bytes > 0) || !(pieces * copies <= kMaxTransferPieces)) {
    char msg[320];
    std::snprintf(msg, sizeof msg,
                  "%s: pieces of %.0f bytes make %.3g pieces of a %.3g-byte transfer (x %d), "
                  "more than the %.0f one simulated run may have; use larger pieces",
                  key, piece_bytes, pieces, total_bytes, copies, kMaxTransferPieces);
    throw ModelError(msg);
  }
  return pieces < 1 ? 1 : static_cast<int>(pieces);
}

const std::vector<const WorkloadOps*>& workload_registry() {
  static const std::vector<const WorkloadOps*> kAll = {
#define TIERSIM_WORKLOAD(Enumerator, name) &workloads::name##_workload,
#include "sim/workloads/registry.def"
#undef TIERSIM_WORKLOAD
  };
  return kAll;
}

const WorkloadOps& workload_ops(WorkloadKind kind) {
  const auto& all = workload_registry();
  const auto i = static_cast<std::size_t>(kind);
  if (i >= all.size() || all[i]->kind != kind)
    throw ModelError("workload kind " + std::to_string(i) +
                     " has no ops table in "
                     "sim/workloads/registry.def");
  return *all[i];
}

const WorkloadOps& find_workload(std::string_view name) {
  std::string valid;
  for (const WorkloadOps* w : workload_registry()) {
    if (w->name == name) return *w;
    valid += (valid.empty() ? "" : ", ") + std::string(w->name);
  }
  throw ModelError("unknown workload kind '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace tiersim::sim
