#pragma once
// The report's "Where the time goes" section: each configuration's run split into phases (the
// phase_* metrics, sim/breakdown.hpp: wall time on the critical path per activity and part of
// the run, adding up to total_s), as one stacked bar per configuration (Vega-Lite,
// reports/charts.hpp) and a table of the largest phases with their share of the run.
#include <string>
#include <vector>

#include "reports/charts.hpp"
#include "store/results_store.hpp"

namespace tiersim::reports {

// The heading, a note on what is measured, the chart and the table; empty when no run has
// phase_* metrics (runs stored before the breakdown existed, or from sweeps, which keep none).
std::vector<ReportPart> breakdown_parts(const std::vector<store::StoredRun>& runs,
                                        const std::vector<std::string>& labels);

// The same table in Markdown ("## Where the time goes"); empty when no run has phases.
std::string breakdown_markdown(const std::vector<store::StoredRun>& runs,
                               const std::vector<std::string>& labels);

}  // namespace tiersim::reports
