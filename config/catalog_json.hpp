#pragma once
// `tiersim catalog --json`: every field of the catalogs' GPUs, drives, hosts and models with
// their sources, and the price quotes, built here once for the program and the Python module.
#include <nlohmann/json.hpp>
#include <string>

#include "config/catalog.hpp"

namespace tiersim::config {

// Throws Error naming the valid kinds (with a near match) unless `which` is all, gpus, drives,
// hosts, models or prices.
void check_catalog_kind(const std::string& which);

// The catalogs of kind `which` ("all": every kind), one key per kind.
nlohmann::json catalog_json(const Catalog& catalog, const std::string& which);

}  // namespace tiersim::config
