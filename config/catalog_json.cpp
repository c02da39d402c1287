#include "config/catalog_json.hpp"

#include <algorithm>
#include <variant>
#include <vector>

#include "config/spec_fields.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

namespace tiersim::config {
namespace {

// Every field of a spec as JSON, with its sources.
template <class T>
nlohmann::json spec_json(const T& spec, const std::vector<SpecField<T>>& fields) {
  nlohmann::json j;
  j["name"] = spec.name;
  for (const auto& f : fields) {
    std::visit(
        [&](auto m) {
          using M = decltype(m);
          if constexpr (std::is_same_v<M, FfnKind T::*>)
            j[f.name] = spec.*m == FfnKind::kGated ? "gated" : "mlp";
          else
            j[f.name] = spec.*m;
        },
        f.member);
  }
  j["sources"] = spec.sources.map();
  return j;
}

nlohmann::json quote_json(const std::string& name, const PriceQuote& q) {
  return {{"name", name}, {"usd", q.usd}, {"date", q.date}, {"source", q.source}};
}

template <class T>
nlohmann::json specs_json(const std::vector<T>& v, const std::vector<SpecField<T>>& f) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : v) a.push_back(spec_json(s, f));
  return a;
}

nlohmann::json prices_json(const Catalog& c) {
  auto list = [](const std::vector<PriceEntry>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : v) a.push_back(quote_json(e.name, e.quote));
    return a;
  };
  nlohmann::json dram = quote_json("dram_usd_per_gb", c.dram_price_per_gb());
  dram.erase("name");
  return {{"gpus", list(c.gpu_prices())},
          {"platforms", list(c.platform_prices())},
          {"drives", list(c.drive_prices())},
          {"dram_usd_per_gb", dram}};
}

}  // namespace

void check_catalog_kind(const std::string& which) {
  const std::vector<std::string> kinds = {"all", "gpus", "drives", "hosts", "models", "prices"};
  if (std::find(kinds.begin(), kinds.end(), which) == kinds.end())
    throw Error("unknown catalog '" + which + "'" + did_you_mean(which, kinds) +
                "; valid: gpus, drives, hosts, models, prices");
}

nlohmann::json catalog_json(const Catalog& c, const std::string& which) {
  check_catalog_kind(which);
  const bool every = which == "all";
  nlohmann::json j = nlohmann::json::object();
  if (every || which == "gpus") j["gpus"] = specs_json(c.gpus(), gpu_fields());
  if (every || which == "drives") j["drives"] = specs_json(c.drives(), drive_fields());
  if (every || which == "hosts") j["hosts"] = specs_json(c.hosts(), host_fields());
  if (every || which == "models") j["models"] = specs_json(c.models(), llm_fields());
  if (every || which == "prices") j["prices"] = prices_json(c);
  return j;
}

}  // namespace tiersim::config
