// DRAM sizing (sim/economics.hpp DramSizing, model/capacity.hpp sized_dram_gb): a catalog host's
// dram_gb is the most the platform holds; energy and cost count what the configuration needs
// unless the scenario chooses the size, and the simulated timing never changes.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"
#include "model/capacity.hpp"
#include "model/units.hpp"
#include "sim/economics.hpp"
#include "sim/simulate.hpp"

namespace sim_dram_sizing_test {

using namespace tiersim;

namespace {

Scenario reference(const std::string& file, const std::vector<std::string>& overrides = {}) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  opts.overrides = overrides;
  return config::load_scenario(std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/" + file,
                               opts);
}

double cpu_required_bytes(const sim::RunResult& r) {
  for (const auto& t : r.memory)
    if (t.tier == "cpu") return t.required_bytes;
  return -1;
}

// The timing metrics sizing must leave alone.
void check_same_timing(const sim::RunResult& a, const sim::RunResult& b) {
  for (const char* m : {"total_s", "prefill_s", "decode_s", "throughput_tokens_per_s"}) {
    INFO(m);
    REQUIRE(a.has(m) == b.has(m));
    if (a.has(m)) CHECK(a.get(m) == b.get(m));
  }
}

}  // namespace

TEST_CASE("sized DRAM of a host whose channels are not known: whole DIMMs, within the platform",
          "[economics]") {
  HostSpec host;  // a hand-built host: no memory_channels, no min_dimm_gib
  host.dram_gb = 4096;
  CHECK(sized_dram_gb(0, host) == kDramDimmGb);  // at least one DIMM
  for (double need_gb : {1.0, 26.5, 100.0, 700.0}) {
    INFO(need_gb);
    const double gb = sized_dram_gb(need_gb * units::kGB, host);
    CHECK(std::fmod(gb, kDramDimmGb) == 0);
    CHECK(gb >= need_gb * kDramHeadroom);
    CHECK(gb < need_gb * kDramHeadroom + kDramDimmGb);
  }
  host.dram_gb = 1024;
  CHECK(sized_dram_gb(2000 * units::kGB, host) == 1024);  // never more than the platform holds
}

// Issue 33: a two-socket server was priced at 32 GB of DRAM, which no such server ships with.
TEST_CASE("a GPU-only run on a two-socket host is priced at the platform's DRAM floor",
          "[economics]") {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario s = config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/llama3-70b-fp8-1xh200-optimized.yaml",
      opts);
  REQUIRE(s.hardware.host.name == "generic-2s-ddr5");
  const sim::RunResult r = sim::simulate(s);
  REQUIRE(r.has("dram_sized_gb"));
  // 2 sockets x 8 channels x one 16 GiB DIMM (scenarios/catalog/hosts.yaml), though the run
  // needs far less.
  const double floor_gb = 2 * 8 * 16 * units::kGiB / units::kGB;
  CHECK(cpu_required_bytes(r) * kDramHeadroom < floor_gb * units::kGB);
  CHECK(r.get("dram_sized_gb") == Approx(floor_gb));
  CHECK(r.get("capex_usd_dram") == Approx(floor_gb * s.economics.prices.dram_per_gb.usd));
  CHECK_THAT(sim::dram_note(s, r),
             Catch::Contains("the platform's floor, 2 sockets x 8 channels x 1 DIMM per channel "
                             "of 16 GiB"));
}

TEST_CASE("a catalog host's DRAM is sized for energy and cost; a chosen size is kept",
          "[economics]") {
  const std::string file = "llama3-70b-a100-4x-gen4-aio.yaml";
  const Scenario s = reference(file);
  const double catalog_gb = s.hardware.host.dram_gb;
  const sim::RunResult sized = sim::simulate(s);
  REQUIRE(sized.fits);
  const double need_bytes = cpu_required_bytes(sized);
  REQUIRE(need_bytes > 0);
  REQUIRE(sized.has("dram_sized_gb"));
  const double gb = sized.get("dram_sized_gb");
  CHECK(gb == sized_dram_gb(need_bytes, s.hardware.host));
  CHECK(gb < catalog_gb);  // this configuration needs far less than the VM's 945 GB
  CHECK(sized.get("capex_usd_dram") == Approx(gb * s.economics.prices.dram_per_gb.usd));
  CHECK_THAT(sim::dram_note(s, sized), Catch::Contains("DRAM sized to"));

  // Off: the catalog's full dram_gb is counted; only energy and cost differ, not the timing.
  const Scenario full = reference(file, {"hardware.host.size_dram=false"});
  const sim::RunResult all = sim::simulate(full);
  CHECK_FALSE(all.has("dram_sized_gb"));
  CHECK(sim::dram_note(full, all).empty());
  CHECK(all.get("capex_usd_dram") == Approx(catalog_gb * s.economics.prices.dram_per_gb.usd));
  CHECK(all.get("energy_j_dram") > sized.get("energy_j_dram"));
  check_same_timing(sized, all);

  // A dram_gb the scenario sets is used as given.
  const sim::RunResult chosen = sim::simulate(reference(file, {"hardware.host.dram_gb=512"}));
  CHECK_FALSE(chosen.has("dram_sized_gb"));
  CHECK(chosen.get("capex_usd_dram") == Approx(512 * s.economics.prices.dram_per_gb.usd));

  // The resolved scenario re-loads to the same sizing (stored runs re-simulate alike) and hash;
  // size_dram: false survives the round trip too.
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario back = config::load_scenario_text(s.resolved_yaml, "resolved", opts);
  CHECK(back.hash == s.hash);
  CHECK(sim::simulate(back).get("dram_sized_gb") == gb);
  const Scenario full_back = config::load_scenario_text(full.resolved_yaml, "resolved", opts);
  CHECK(full_back.hash == full.hash);
  CHECK_FALSE(sim::simulate(full_back).has("dram_sized_gb"));
}

TEST_CASE("FlexGen's page cache over the disk tier counts as need: its timing is unchanged",
          "[economics]") {
  for (const char* file : {"flexgen-t4-opt175b-p256.yaml", "flexgen-t4-opt175b-comp-p256.yaml"}) {
    INFO(file);
    const Scenario s = reference(file);
    const sim::RunResult sized = sim::simulate(s);
    const sim::RunResult all = sim::simulate(reference(file, {"hardware.host.size_dram=false"}));
    check_same_timing(sized, all);
    if (!sized.has("dram_sized_gb")) continue;
    const sim::DramSizing d = sim::dram_sizing(s, sized);
    CHECK(d.sized);
    CHECK(d.need_bytes >= cpu_required_bytes(sized));
    // Whether the disk tier was read from the page cache is the same with either size.
    double disk_bytes = 0;
    for (const auto& t : sized.memory)
      if (t.tier == "nvme") disk_bytes = t.required_bytes;
    if (disk_bytes > 0 && all.has("page_cache_bytes"))
      CHECK((sized.get("page_cache_bytes") >= disk_bytes) ==
            (all.get("page_cache_bytes") >= disk_bytes));
  }
}
}  // namespace sim_dram_sizing_test
