#include "model/provenance.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace model_provenance_test {

using namespace tiersim;

// Keys and fields of catalog entries must outlive the provenance, as the option table's do.
const std::string kMemoryKey = "hardware.gpu.memory_mib";
const std::string kMemoryField = "memory_mib";
const std::string kTdpKey = "hardware.gpu.tdp_w";
const std::string kTdpField = "tdp_w";
const std::string kLayersKey = "model.layers";
const std::string kLayersField = "layers";

TEST_CASE("a catalog entry reads as the source the catalog gave when it was set",
          "[model][provenance]") {
  SourceMap gpu{{"memory_mib", "nvidia-smi total"}};
  Provenance p;
  p.set_catalog(kMemoryKey, gpu, kMemoryField);
  p.set_catalog(kTdpKey, gpu, kTdpField);  // no source: the default
  CHECK(p.source(kMemoryKey) == "catalog: nvidia-smi total");
  CHECK(p.source(kTdpKey) == "default");
  CHECK_FALSE(p.source("hardware.gpu.arch"));
  // A later write to the spec's sources (an override of another field) does not change it.
  gpu["memory_mib"] = "override";
  CHECK(p.at(kMemoryKey) == "catalog: nvidia-smi total");

  // A config.json's field says so itself.
  SourceMap model{{"layers", "hf_config hf/x.json: num_hidden_layers"}};
  p.set_catalog(kLayersKey, model, kLayersField);
  CHECK(p.at(kLayersKey) == "hf_config hf/x.json: num_hidden_layers");
  CHECK_THROWS_AS(p.at("model.heads"), std::out_of_range);
}

TEST_CASE("later entries replace earlier ones, as assignments to a map would",
          "[model][provenance]") {
  const SourceMap gpu{{"memory_mib", "datasheet"}};
  Provenance p;
  p.set_catalog(kMemoryKey, gpu, kMemoryField);
  p.set(kMemoryKey, "override");
  p.set("hardware.nvme.model", "profile: d.yaml (catalog_drive)");
  p.set("hardware.nvme.read_gbps", "default");
  CHECK(p.at(kMemoryKey) == "override");
  CHECK(p.size() == 3);
  const Provenance::Map all = p.entries();
  REQUIRE(all.size() == 3);
  CHECK(all.begin()->first == kMemoryKey);  // sorted by key
  CHECK(all.at(kMemoryKey) == "override");

  // Erasing a prefix removes what was there; a later entry for such a key counts again.
  p.erase_prefix("hardware.nvme.");
  CHECK_FALSE(p.source("hardware.nvme.model"));
  CHECK(p.size() == 1);
  Provenance only_erased;
  only_erased.set("hardware.nvme.model", "default");
  only_erased.erase_prefix("hardware.nvme.");
  CHECK(only_erased.empty());
  CHECK_FALSE(p.empty());
  p.set("hardware.nvme.profile", "profile: d.yaml");
  CHECK(p.at("hardware.nvme.profile") == "profile: d.yaml");
  CHECK(p.entries() ==
        Provenance::Map{{kMemoryKey, "override"}, {"hardware.nvme.profile", "profile: d.yaml"}});

  // Copies read the same and compare equal; a write to one is its own.
  Provenance copy = p;
  CHECK(copy == p);
  copy.set(kMemoryKey, "set by a test");
  CHECK_FALSE(copy == p);
  CHECK(p.at(kMemoryKey) == "override");
}

}  // namespace model_provenance_test
