#include "study/metric_names.hpp"

#include <algorithm>

#include "config/yaml_reader.hpp"
#include "sim/metrics.hpp"

namespace tiersim::study {

std::string unknown_metric_text(const std::string& metric,
                                const std::vector<std::string>& also_known) {
  if (sim::find_metric(metric) ||
      std::find(also_known.begin(), also_known.end(), metric) != also_known.end())
    return "";
  std::vector<std::string> names = also_known;
  for (const sim::MetricDecl& d : sim::metric_declarations()) names.emplace_back(d.name);
  return "unknown metric" + config::did_you_mean(metric, names) +
         " (tiersim schema --metrics lists them)";
}

}  // namespace tiersim::study
