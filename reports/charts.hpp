#pragma once
// The report's one chart mechanism: every chart is a Vega-Lite v5 spec that report.cpp embeds in
// a <div class="plot"> and the inlined Vega scripts draw (reports/vendor). A section of the report
// is a list of parts: HTML, then the chart that follows it (none when the spec is null). Adding a
// chart is a function returning a spec made with chart_spec, in the file of its section.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace tiersim::reports {

// A section's piece: its HTML (headings, notes; escaped by whoever made it), then its chart.
struct ReportPart {
  std::string html;
  nlohmann::json spec;  // Vega-Lite; null: no chart
};

// The common frame of every chart: schema, title, size in pixels, font and axis label width.
nlohmann::json chart_spec(const std::string& title, int width, int height);

// The height of a chart of `rows` horizontal bars, `px_per_row` each, at least 60 px.
int bars_height(std::size_t rows, std::size_t px_per_row);

}  // namespace tiersim::reports
