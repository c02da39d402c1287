#include "config/catalog.hpp"

#include <cstdlib>
#include <set>

#include "config/spec_fields.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

#ifndef TIERSIM_DATA_DIR
#define TIERSIM_DATA_DIR "scenarios"
#endif

namespace tiersim::config {

namespace {

// Reads one catalog file: `top_key:` holding a list of entries whose keys are `name`, the spec's
// fields and `sources`.
template <class T>
std::vector<T> read_specs(const std::string& path, const std::string& top_key,
                          const std::vector<SpecField<T>>& fields) {
  const YNode root = parse_yaml_file(path, "catalog file");
  if (root.is_null()) root.fail("empty catalog file (expected '" + top_key + ":' with a list)");
  root.check_keys({top_key});
  std::vector<std::string> valid = {"name"};
  std::vector<std::string> field_names;
  for (const auto& f : fields) field_names.push_back(f.name);
  valid.insert(valid.end(), field_names.begin(), field_names.end());
  valid.push_back("sources");

  std::vector<T> out;
  std::set<std::string> seen;
  for (const YNode& entry : root.require(top_key, "a list of entries").items()) {
    entry.check_keys(valid);
    T spec;
    const YNode name_node = entry.require("name", "the entry's name");
    spec.name = name_node.as_string();
    if (!seen.insert(to_lower(spec.name)).second)
      name_node.fail("duplicate name '" + spec.name + "' (names are case-insensitive)");
    if (auto src = entry.get("sources")) {
      src->check_keys(field_names);
      for (auto& [key, text] : src->entries()) spec.sources[key] = text.as_string();
    }
    for (const auto& f : fields) {
      auto node = entry.get(f.name);
      if (!node) continue;
      read_field(*node, f, spec);
      // Every number must say where it came from; that is the point of the catalog.
      if (field_is_numeric(f) && !spec.sources.count(f.name))
        node->fail("no source given; add '" + std::string(f.name) +
                   ": \"<where this number comes from>\"' to the entry's sources (start it with "
                   "'estimate' for a derived value)");
    }
    out.push_back(std::move(spec));
  }
  return out;
}

PriceQuote read_quote(const YNode& node) {
  PriceQuote q;
  q.usd = node.require("usd", "a price in US dollars").as_double(0, kNoLimit);
  if (auto d = node.get("date")) q.date = d->as_string();
  q.source = node.require("source", "where the price comes from").as_string();
  return q;
}

std::vector<PriceEntry> read_prices(const YNode& list, const std::vector<std::string>& known,
                                    const std::string& what) {
  std::vector<PriceEntry> out;
  std::set<std::string> seen;
  for (const YNode& item : list.items()) {
    item.check_keys({"name", "usd", "date", "source"});
    const YNode name_node = item.require("name", "the " + what + "'s catalog name");
    PriceEntry e{name_node.as_string(), read_quote(item)};
    // A price for a name no catalog defines would silently never be used: make the typo loud.
    bool found = false;
    for (const auto& k : known) found = found || to_lower(k) == to_lower(e.name);
    if (!found)
      name_node.fail("no " + what + " named '" + e.name + "' in the catalog" +
                     did_you_mean(e.name, known) + "; valid: " + join(known));
    if (!seen.insert(to_lower(e.name)).second) name_node.fail("duplicate price entry");
    out.push_back(std::move(e));
  }
  return out;
}

template <class T>
std::vector<std::string> names_of(const std::vector<T>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.name);
  return out;
}

template <class T>
const T& find_named(const std::vector<T>& v, const std::string& name, const std::string& what,
                    const std::string& file) {
  for (const auto& x : v)
    if (to_lower(x.name) == to_lower(name)) return x;
  const auto names = names_of(v);
  throw CatalogError("unknown " + what + " '" + name + "'" + did_you_mean(name, names) +
                     "; valid: " + join(names) + " (catalog " + file + ")");
}

PriceQuote find_price(const std::vector<PriceEntry>& v, const std::string& name) {
  for (const auto& e : v)
    if (to_lower(e.name) == to_lower(name)) return e.quote;
  return PriceQuote{};
}

}  // namespace

std::string default_data_dir() {
  // Reading the environment is not mutable state of ours; it lets an installed binary or a test
  // point at another scenarios folder.
  if (const char* env = std::getenv("TIERSIM_DATA_DIR"); env && *env) return env;
  return TIERSIM_DATA_DIR;
}

Catalog Catalog::load(const std::string& data_dir) {
  Catalog c;
  c.dir_ = (data_dir.empty() ? default_data_dir() : data_dir) + "/catalog";
  c.gpus_ = read_specs<GpuSpec>(c.dir_ + "/gpus.yaml", "gpus", gpu_fields());
  c.drives_ = read_specs<NvmeSpec>(c.dir_ + "/drives.yaml", "drives", drive_fields());
  c.hosts_ = read_specs<HostSpec>(c.dir_ + "/hosts.yaml", "hosts", host_fields());
  c.models_ = read_specs<LlmSpec>(c.dir_ + "/models.yaml", "models", llm_fields());

  const YNode root = parse_yaml_file(c.dir_ + "/prices.yaml", "catalog file");
  if (root.is_null()) root.fail("empty catalog file (expected 'prices:')");
  root.check_keys({"prices"});
  const YNode prices = root.require("prices", "a map of gpus, platforms, drives, dram_usd_per_gb");
  prices.check_keys({"gpus", "platforms", "drives", "dram_usd_per_gb"});
  if (auto n = prices.get("gpus")) c.gpu_prices_ = read_prices(*n, names_of(c.gpus_), "GPU");
  if (auto n = prices.get("platforms"))
    c.platform_prices_ = read_prices(*n, names_of(c.hosts_), "host");
  if (auto n = prices.get("drives"))
    c.drive_prices_ = read_prices(*n, names_of(c.drives_), "drive");
  if (auto n = prices.get("dram_usd_per_gb")) {
    n->check_keys({"usd", "date", "source"});
    c.dram_per_gb_ = read_quote(*n);
  }
  return c;
}

const GpuSpec& Catalog::gpu(const std::string& name) const {
  return find_named(gpus_, name, "GPU", dir_ + "/gpus.yaml");
}
const HostSpec& Catalog::host(const std::string& name) const {
  return find_named(hosts_, name, "host", dir_ + "/hosts.yaml");
}
const NvmeSpec& Catalog::drive(const std::string& name) const {
  return find_named(drives_, name, "drive", dir_ + "/drives.yaml");
}
const LlmSpec& Catalog::model(const std::string& name) const {
  return find_named(models_, name, "model", dir_ + "/models.yaml");
}

PriceQuote Catalog::gpu_price(const std::string& name) const {
  return find_price(gpu_prices_, name);
}
PriceQuote Catalog::platform_price(const std::string& host_name) const {
  return find_price(platform_prices_, host_name);
}
PriceQuote Catalog::drive_price(const std::string& name) const {
  return find_price(drive_prices_, name);
}

}  // namespace tiersim::config
