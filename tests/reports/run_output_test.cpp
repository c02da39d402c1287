// `tiersim run`'s output (reports/run_output.cpp): a run whose cost metrics are missing says
// which price is missing and how to supply it, in the text and in --json.
#include "reports/run_output.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "config/scenario_loader.hpp"
#include "sim/metrics.hpp"
#include "sim/simulate.hpp"

namespace reports_run_output_test {

using namespace tiersim;

namespace {

Scenario reference(const std::vector<std::string>& overrides = {}) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  opts.overrides = overrides;
  return config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/llama3-70b-a100-4x-gen4-aio.yaml",
      opts);
}

}  // namespace

TEST_CASE("run output names the missing price when cost metrics are omitted", "[report][run]") {
  const Scenario priced = reference();
  const sim::RunResult priced_result = sim::simulate(priced);
  REQUIRE(priced_result.has("capex_usd"));
  std::ostringstream priced_text;
  reports::print_human(priced_text, priced, priced_result);
  CHECK(priced_text.str().find("cost metrics omitted") == std::string::npos);
  CHECK_FALSE(reports::to_json(priced, priced_result).contains("cost_note"));

  // A catalog drive without an entry in prices.yaml (a cloud instance's local SSD).
  const Scenario unpriced = reference({"hardware.nvme.model=gcp-local-ssd-nvme"});
  REQUIRE_FALSE(unpriced.economics.prices.drive.known());
  const sim::RunResult r = sim::simulate(unpriced);
  REQUIRE_FALSE(r.has("capex_usd"));
  std::ostringstream text;
  reports::print_human(text, unpriced, r);
  CHECK(text.str().find("note       cost metrics omitted: no price for NVMe drive") !=
        std::string::npos);
  CHECK(text.str().find("economics.prices.drive_usd") != std::string::npos);
  const nlohmann::json j = reports::to_json(unpriced, r);
  REQUIRE(j.contains("cost_note"));
  CHECK(j["cost_note"].get<std::string>().find("economics.prices.drive_usd") != std::string::npos);
}

TEST_CASE("run output: the time breakdown in JSON and as text", "[reports][breakdown]") {
  config::LoadOptions load;
  load.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario s = config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/opt30b-l40s-dram.yaml", load);
  sim::SimOptions o;
  o.breakdown = true;
  const sim::RunResult r = sim::simulate(s, o);
  REQUIRE(r.phases.size() > 3);
  const nlohmann::json j = reports::to_json(s, r);
  REQUIRE(j.contains("phases"));
  REQUIRE(j.contains("phases_measure"));
  double share = 0, path = 0;
  for (const auto& p : j["phases"]) {
    share += p["share"].get<double>();
    path += p["path_s"].get<double>();
    // Each phase is also a top-level metric, with its unit.
    const std::string metric = p["metric"].get<std::string>();
    CHECK(j[metric].get<double>() == p["path_s"].get<double>());
    CHECK(j["units"][metric] == "s");
    CHECK_FALSE(p["label"].get<std::string>().empty());
  }
  CHECK(share == Approx(1.0));
  CHECK(path == Approx(r.get(sim::metric::kTotalS)));
  CHECK(j["phases"][0]["bottleneck_label"] == "host CPUs");
  CHECK(j["phases"][0]["metric"] == "phase_prefill_kv_offload_s");

  // At most `max_rows` rows, the rest summed in one line.
  std::ostringstream text;
  reports::print_breakdown(text, r, 2);
  const std::string t = text.str();
  CHECK(std::count(t.begin(), t.end(), '\n') == 5);  // header, two phases, the rest, stages
  // The stages' parts: prefill, then decode.
  const auto stages = t.find("  by stage: prefill ");
  REQUIRE(stages != std::string::npos);
  CHECK(t.find(", decode ", stages) != std::string::npos);
  CHECK(t.find(std::to_string(r.phases.size() - 2) + " more phases") != std::string::npos);
  // Without phases, nothing.
  std::ostringstream none;
  reports::print_breakdown(none, sim::RunResult{}, 0);
  CHECK(none.str().empty());
}

TEST_CASE("run output: where a workload projects total_s from a sample, the breakdown says so",
          "[reports][breakdown]") {
  // FlexGen's fewer_batch mode simulates the prefill and part of one decode step.
  config::LoadOptions load;
  load.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario s = config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/flexgen-t4-opt30b-p256.yaml", load);
  REQUIRE(s.policy.flexgen.debug_fewer_batch);
  sim::SimOptions o;
  o.breakdown = true;
  const sim::RunResult r = sim::simulate(s, o);
  std::ostringstream text;
  reports::print_human(text, s, r);
  CHECK(text.str().find("the phases cover the ") != std::string::npos);
  const nlohmann::json j = reports::to_json(s, r);
  CHECK(j["phases_simulated_s"].get<double>() < r.get(sim::metric::kTotalS));

  // A run simulated whole: no such note, and the phases cover total_s.
  const Scenario whole = reference();
  const sim::RunResult w = sim::simulate(whole, o);
  std::ostringstream whole_text;
  reports::print_human(whole_text, whole, w);
  CHECK(whole_text.str().find("the phases cover the ") == std::string::npos);
  CHECK(reports::to_json(whole, w)["phases_simulated_s"].get<double>() ==
        Approx(w.get(sim::metric::kTotalS)));
}

TEST_CASE("run output: the notes on the inputs, in the text and in --json, also without a fit",
          "[reports][run][notes]") {
  Scenario s = reference();
  const sim::RunResult plain = sim::simulate(s);
  std::ostringstream plain_text;
  reports::print_human(plain_text, s, plain);
  CHECK(plain_text.str().find("notes      ") == std::string::npos);
  CHECK_FALSE(reports::to_json(s, plain).contains("notes"));

  s.notes = {{InputNote::Kind::kWarning, "hardware.nvme.profile", "calibration warned: a cache"},
             {InputNote::Kind::kSource, "hardware.nvme", "power from catalog drive 'x'"}};
  for (const bool fits : {true, false}) {
    sim::RunResult r = plain;
    if (!fits) {
      r.fits = false;
      r.shortfall = "too big";
    }
    std::ostringstream text;
    reports::print_human(text, s, r);
    INFO(text.str());
    CHECK(text.str().find("notes      on the inputs\n"
                          "  warning: hardware.nvme.profile: calibration warned: a cache\n"
                          "  source: hardware.nvme: power from catalog drive 'x'\n") !=
          std::string::npos);
    const nlohmann::json j = reports::to_json(s, r);
    REQUIRE(j.contains("notes"));
    REQUIRE(j["notes"].size() == 2);
    CHECK(j["notes"][0] == nlohmann::json{{"kind", "warning"},
                                         {"subject", "hardware.nvme.profile"},
                                         {"message", "calibration warned: a cache"}});
    CHECK(j["notes"][1]["kind"] == "source");
  }
}
}  // namespace reports_run_output_test

namespace reports_run_output_test {

TEST_CASE("run output quotes its group's error band and names what is unvalidated",
          "[report][run][accuracy]") {
  const std::string data = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const Scenario s = reference();
  const sim::RunResult r = sim::simulate(s);
  const reports::ErrorBand band = reports::error_band(reports::run_accuracy_of(s, data));
  REQUIRE(band.validation_run);
  CHECK_FALSE(band.group.empty());
  std::ostringstream text;
  reports::print_human(text, s, r, &band);
  INFO(text.str());
  CHECK(text.str().find("accuracy   ") != std::string::npos);
  CHECK(text.str().find("group " + band.group) != std::string::npos);
  const nlohmann::json j = reports::accuracy_json(band);
  CHECK(j["group"] == band.group);
  CHECK(j["text"] == reports::accuracy_text(band));

  // A group of fewer published rows than back a margin says how few, in full as in short.
  reports::ErrorBand few = band;
  few.measurements = 1;
  CHECK(reports::accuracy_text(few).find("; from 1 published row only)") != std::string::npos);
  few.measurements = reports::ErrorBand::kMinRowsToBackMargin;
  CHECK(reports::accuracy_text(few).find("published row") == std::string::npos);

  // A GPU no published row runs on.
  const Scenario gb200 = reference({"hardware.gpu.model=GB200"});
  const reports::ErrorBand unanchored = reports::error_band(reports::run_accuracy_of(gb200, data));
  CHECK(reports::accuracy_text(unanchored).find("unvalidated: GPU GB200") != std::string::npos);
  CHECK(reports::accuracy_json(unanchored)["unvalidated"] == nlohmann::json{"GPU GB200"});

  // A data folder without the file: the line says so rather than quoting nothing.
  const reports::ErrorBand none =
      reports::error_band(reports::run_accuracy_of(s, "/nonexistent-data-dir"));
  CHECK_FALSE(none.validation_run);
  CHECK(reports::accuracy_text(none).find("unknown") == 0);
  CHECK(reports::accuracy_json(none)["error_band_pct"].is_null());
}

}  // namespace reports_run_output_test
