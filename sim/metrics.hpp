#pragma once
// Every output metric, declared once: name, unit and meaning. RunResult::set takes the unit from
// here, so a metric cannot appear with two units; the JSON (`run --json` "units"), the results
// store, `compare`, the reports and the metric table in scenarios/README.md (`tiersim schema
// --metrics`) all read these declarations.
#include <string>
#include <string_view>
#include <vector>

namespace tiersim::sim {

struct MetricDecl {
  std::string_view name;         // stable identifier, e.g. "ttft_s"
  std::string_view unit;         // "s", "GB/s", "USD", ... ("" = dimensionless)
  std::string_view description;  // what it measures, in one sentence
  std::string_view workloads;    // which workloads report it ("energy"/"cost": every workload
                                 // with the energy-and-cost capability)
};

const std::vector<MetricDecl>& metric_declarations();
// nullptr when `name` is not declared.
const MetricDecl* find_metric(std::string_view name);
// The declaration of `name`; throws std::logic_error (a programming error, not bad input) when
// it is not declared.
const MetricDecl& metric_decl(std::string_view name);
// The declarations as a Markdown table (scenarios/README.md's "Output metrics").
std::string metrics_markdown();

}  // namespace tiersim::sim
