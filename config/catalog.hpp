#pragma once
// The hardware, model and price catalogs (scenarios/catalog/*.yaml), read strictly: an unknown key
// is an error, and every numeric value must name its source in the entry's `sources:` map.
// Names are matched case-insensitively; an unknown name is a CatalogError listing the valid ones.
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/llm.hpp"
#include "model/scenario.hpp"

namespace tiersim::config {

// The data directory: $TIERSIM_DATA_DIR when set, else the scenarios/ folder of the source tree
// this library was built from.
std::string default_data_dir();

struct PriceEntry {
  std::string name;
  PriceQuote quote;
};

class Catalog {
 public:
  // Reads <data_dir>/catalog/{gpus,drives,hosts,models,prices}.yaml; "" = default_data_dir().
  // Throws ConfigError (file, line, key) on any malformed entry.
  static Catalog load(const std::string& data_dir = "");

  const GpuSpec& gpu(const std::string& name) const;
  const HostSpec& host(const std::string& name) const;
  const NvmeSpec& drive(const std::string& name) const;
  const LlmSpec& model(const std::string& name) const;

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::vector<HostSpec>& hosts() const { return hosts_; }
  const std::vector<NvmeSpec>& drives() const { return drives_; }
  const std::vector<LlmSpec>& models() const { return models_; }

  // Prices by component name (case-insensitive); usd = -1 when the catalog has none.
  PriceQuote gpu_price(const std::string& name) const;
  PriceQuote platform_price(const std::string& host_name) const;
  PriceQuote drive_price(const std::string& name) const;
  PriceQuote dram_price_per_gb() const { return dram_per_gb_; }
  const std::vector<PriceEntry>& gpu_prices() const { return gpu_prices_; }
  const std::vector<PriceEntry>& platform_prices() const { return platform_prices_; }
  const std::vector<PriceEntry>& drive_prices() const { return drive_prices_; }

  const std::string& dir() const { return dir_; }  // the catalog folder it was read from

 private:
  std::string dir_;
  std::vector<GpuSpec> gpus_;
  std::vector<HostSpec> hosts_;
  std::vector<NvmeSpec> drives_;
  std::vector<LlmSpec> models_;
  std::vector<PriceEntry> gpu_prices_;
  std::vector<PriceEntry> platform_prices_;
  std::vector<PriceEntry> drive_prices_;
  PriceQuote dram_per_gb_;
};

}  // namespace tiersim::config
