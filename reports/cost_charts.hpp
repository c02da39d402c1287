#pragma once
// The report's cost section (Vega-Lite charts, reports/charts.hpp): each configuration's capex broken
// down by component (stacked bars), and throughput against cost per million tokens with the
// Pareto front (the configurations no other one beats on both).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "reports/charts.hpp"
#include "store/results_store.hpp"

namespace tiersim::reports {

// Indices of the points (throughput, usd_per_million_tokens) that no other point matches or
// beats on both (higher throughput, lower cost), in ascending throughput.
std::vector<std::size_t> cost_pareto_front(const std::vector<std::pair<double, double>>& points);

// "<h2>Cost</h2>" and the two charts (with a numbered list of the scatter's points), labels[i]
// naming runs[i]; empty when no run has a capex breakdown. The scatter is left out when fewer
// than two runs have both metrics.
std::vector<ReportPart> cost_chart_parts(const std::vector<store::StoredRun>& runs,
                                         const std::vector<std::string>& labels);

}  // namespace tiersim::reports
