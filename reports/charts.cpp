#include "reports/charts.hpp"

#include <algorithm>

namespace tiersim::reports {

nlohmann::json chart_spec(const std::string& title, int width, int height) {
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v5.json"},
          {"title", title},
          {"width", width},
          {"height", height},
          {"config", {{"font", "sans-serif"}, {"axis", {{"labelLimit", 260}}}}}};
}

int bars_height(std::size_t rows, std::size_t px_per_row) {
  return static_cast<int>(std::max<std::size_t>(60, px_per_row * rows));
}

}  // namespace tiersim::reports
