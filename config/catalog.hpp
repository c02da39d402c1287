#pragma once
// The hardware, model and price catalogs (scenarios/catalog/*.yaml), read strictly: an unknown key
// is an error, and every numeric value must name its source in the entry's `sources:` map.
// Names are matched case-insensitively; an unknown name is a CatalogError listing the valid ones.
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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

// The catalogs of the source tree, parsed when this program was built (the build runs
// tiersim_catalog_snapshot), keyed by a hash of the files' text.
struct CatalogSnapshot {
  std::string_view texts_hash;  // Catalog::texts_hash of the files it was made from
  std::string_view data;        // Catalog::to_text()
  // Catalog::texts of those files: load() compares the files with it, byte for byte (a compare
  // runs at memory speed; hashing the 200 KB at every start cost as much as decoding the data).
  std::string_view texts;
};
// The snapshot built into this program; nullptr in the snapshot generator itself.
const CatalogSnapshot* builtin_catalog_snapshot();

class Catalog {
 public:
  // Reads <data_dir>/catalog/{gpus,drives,hosts,models,prices}.yaml; "" = default_data_dir().
  // Throws ConfigError (file, line, key) on any malformed entry. When the files are byte for byte
  // those of the built-in snapshot, the snapshot is returned instead of parsing them again: the
  // YAML parser needs milliseconds for the five files, most of a short command's run time.
  static Catalog load(const std::string& data_dir = "");
  // Same, always parsing the files (the snapshot generator; tests comparing the two).
  static Catalog parse(const std::string& data_dir = "");
  // True when load() serves the built-in snapshot for this folder: texts(data_dir) would equal
  // the snapshot's texts. Each file is compared as it is read, without building that string.
  static bool matches_snapshot(const std::string& data_dir = "");

  // Everything load() reads, as text: from_text(to_text(), dir) is an identical catalog.
  std::string to_text() const;
  static Catalog from_text(std::string_view text, const std::string& dir);
  // Hash of the five files' names and text (16 hex digits); "" when one cannot be read.
  static std::string texts_hash(const std::string& data_dir);
  // What texts_hash hashes: the names and text of the five files and of the config.json files
  // models may name (catalog/hf/); "" when one of the five cannot be read.
  static std::string texts(const std::string& data_dir);

  const GpuSpec& gpu(const std::string& name) const;
  const HostSpec& host(const std::string& name) const;
  const NvmeSpec& drive(const std::string& name) const;
  const LlmSpec& model(const std::string& name) const;

  // Every entry, in catalog order. A catalog served from the built-in snapshot decodes a list at
  // its first use (and gpu(name) etc. only the entry asked for).
  const std::vector<GpuSpec>& gpus() const;
  const std::vector<HostSpec>& hosts() const;
  const std::vector<NvmeSpec>& drives() const;
  const std::vector<LlmSpec>& models() const;

  // Prices by component name (case-insensitive); usd = -1 when the catalog has none.
  PriceQuote gpu_price(const std::string& name) const;
  PriceQuote platform_price(const std::string& host_name) const;
  PriceQuote drive_price(const std::string& name) const;
  PriceQuote dram_price_per_gb() const { return dram_per_gb_; }
  const std::vector<PriceEntry>& gpu_prices() const { return gpu_prices_; }
  const std::vector<PriceEntry>& platform_prices() const { return platform_prices_; }
  const std::vector<PriceEntry>& drive_prices() const { return drive_prices_; }
  // Cloud instances rented by the hour (prices.yaml `cloud`); unknown name: CatalogError.
  const CloudInstance& cloud_instance(const std::string& name) const;
  const std::vector<CloudInstance>& cloud_instances() const { return cloud_; }

  const std::string& dir() const { return dir_; }  // the catalog folder it was read from

 private:
  static Catalog parse_texts(const std::string& dir,
                             const std::array<std::optional<std::string>, 5>& texts);
  // The built-in snapshot's text, decoded as it is used (see gpus()); same content as from_text.
  static Catalog from_snapshot(std::string_view text, const std::string& dir);
  struct Lazy;  // the snapshot's entries, found once and decoded at their first use
  std::shared_ptr<Lazy> lazy_;  // null: the lists below hold every entry

  std::string dir_;
  std::vector<GpuSpec> gpus_;
  std::vector<HostSpec> hosts_;
  std::vector<NvmeSpec> drives_;
  std::vector<LlmSpec> models_;
  std::vector<PriceEntry> gpu_prices_;
  std::vector<PriceEntry> platform_prices_;
  std::vector<PriceEntry> drive_prices_;
  PriceQuote dram_per_gb_;
  std::vector<CloudInstance> cloud_;
};

// The catalogs of one data folder, loaded at the first use and kept, so that a command loading
// many scenarios (comparison variants, stored runs, capacity rates) reads them once, at the
// point of its first load, as that load would. A load that fails is tried again at the next use,
// so every use reports the error a load of its own would. Safe to share between threads.
class CatalogOnce {
 public:
  explicit CatalogOnce(std::string data_dir = "") : data_dir_(std::move(data_dir)) {}
  const Catalog& get() const;

 private:
  std::string data_dir_;
  mutable std::mutex mutex_;
  mutable std::optional<Catalog> catalog_;
};

}  // namespace tiersim::config
