// `tiersim run` as people read it: where the time goes, and values in people's forms.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_cmd_run_test {

TEST_CASE("run: the time breakdown and values in people's forms", "[app][run][breakdown]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim::test::tiersim_stdout(
      "run scenarios/inference/opt30b-l40s-dram.yaml", dir.file("out.txt"));
  INFO(text);
  CHECK(text.find("where the time goes") != std::string::npos);
  CHECK(text.find("prefill KV cache write-back to host") != std::string::npos);
  CHECK(text.find("bottleneck ") != std::string::npos);
  // capex as dollars with separators, bytes with their unit.
  CHECK(text.find("capex_usd                   $") != std::string::npos);
  CHECK(text.find("weights_bytes               ") != std::string::npos);
  CHECK(text.find(" GB\n") != std::string::npos);
  // The phase_* metrics are the breakdown's rows, not lines of the metric list.
  CHECK(text.find("  phase_") == std::string::npos);
}

namespace {

// A profile as `tiersim calibrate` writes it for a virtual disk whose host caches writes
// (calibrate/plausibility.cpp's two warnings), naming the catalog drive it stands for.
constexpr const char* kCacheProfile =
    "# tiersim device profile (written by tiersim calibrate)\n"
    "name: \"vm-disk\"\n"
    "read:  {peak_gbps: 2.0, io_overhead_us: 5, latency_us: 90, stream_gbps: 0}\n"
    "write: {peak_gbps: 4.2, io_overhead_us: 5, latency_us: 20, stream_gbps: 0}\n"
    "fit:   {points: 24, heldout_points: 6, read_fit_error_pct: 20, read_heldout_error_pct: 31.5, "
    "write_fit_error_pct: 5, write_heldout_error_pct: 6}\n"
    "catalog_drive: \"generic-gen5\"\n"
    "warnings:\n"
    "  - \"writes measured 2.10x faster than reads (4.200 vs 2.000 GB/s at best; a drive writes at "
    "most about as fast as it reads): a write-back cache (host or hypervisor) is likely absorbing "
    "the writes\"\n"
    "  - \"the device model misses the read points by 31.5% (held out), more than 25%: the "
    "measurements do not behave like one drive's queue (a cache, throttling or a noisy "
    "neighbour)\"\n";

std::string small_scenario(const std::string& name, const std::string& nvme) {
  return "name: " + name + "\nhardware:\n  gpu: {model: H200, count: 1}\n  nvme: " + nvme +
         "\nmodel: {name: llama-3-70b}\n"
         "workload: {kind: inference, batch: 8, prompt_tokens: 512, gen_tokens: 8}\n"
         "policy: {weights: nvme}\n";
}

}  // namespace

TEST_CASE("run, compare and the report show a profile's warnings and its drive's price and power",
          "[app][run][compare][notes]") {
  tiersim::test::TempDir dir;
  std::ofstream(dir.file("device.yaml")) << kCacheProfile;
  std::ofstream(dir.file("profiled.yaml")) << small_scenario("profiled", "{profile: device.yaml, count: 2}");
  std::ofstream(dir.file("catalog.yaml")) << small_scenario("catalog-drive", "{model: generic-gen5, count: 2}");
  const std::string out = dir.file("out.txt");
  const std::string profiled = "'" + dir.file("profiled.yaml") + "'";

  const std::string text = tiersim::test::tiersim_stdout("run " + profiled, out);
  INFO(text);
  CHECK(text.find("notes      on the inputs\n") != std::string::npos);
  CHECK(text.find("  warning: hardware.nvme.profile: calibration of profile 'vm-disk'") !=
        std::string::npos);
  CHECK(text.find("a write-back cache (host or hypervisor) is likely absorbing the writes") !=
        std::string::npos);
  CHECK(text.find("misses the read points by 31.5% (held out)") != std::string::npos);
  CHECK(text.find("  source: hardware.nvme: profile 'vm-disk'") != std::string::npos);
  CHECK(text.find("their price and power come from catalog drive 'generic-gen5' (named by the "
                  "profile's catalog_drive): active 22 W (catalog: ") != std::string::npos);

  const nlohmann::json j =
      nlohmann::json::parse(tiersim::test::tiersim_stdout("run --json " + profiled, out));
  REQUIRE(j.contains("notes"));
  REQUIRE(j["notes"].size() == 3);
  CHECK(j["notes"][0]["kind"] == "warning");
  CHECK(j["notes"][1]["kind"] == "warning");
  CHECK(j["notes"][2]["kind"] == "source");
  CHECK(j["notes"][2]["subject"] == "hardware.nvme");

  // compare: a footnote per configuration; the catalog drive alone has none.
  const std::string both = profiled + " '" + dir.file("catalog.yaml") + "'";
  const std::string cmp = tiersim::test::tiersim_stdout("compare --sources " + both, out);
  INFO(cmp);
  CHECK(cmp.find("profiled: warning: hardware.nvme.profile: calibration of profile 'vm-disk'") !=
        std::string::npos);
  CHECK(cmp.find("profiled: source: hardware.nvme: ") != std::string::npos);
  CHECK(cmp.find("catalog-drive: warning:") == std::string::npos);
  CHECK(cmp.find("catalog-drive: source:") == std::string::npos);
  // --sources: the notes close the profiled configuration's list of inputs.
  const auto sources = cmp.find("\nsources: profiled\n");
  REQUIRE(sources != std::string::npos);
  CHECK(cmp.find("  source: hardware.nvme: profile 'vm-disk'", sources) != std::string::npos);
  const nlohmann::json cj =
      nlohmann::json::parse(tiersim::test::tiersim_stdout("compare --json " + both, out));
  REQUIRE(cj["variants"].size() == 2);
  CHECK(cj["variants"][0]["notes"].size() == 3);
  CHECK_FALSE(cj["variants"][1].contains("notes"));

  // The report: the store keeps the resolved scenario, which loads again with the same notes.
  const std::string db = "'" + dir.file("r.db") + "'";
  tiersim::test::tiersim_stdout("run " + profiled + " --db " + db, out);
  tiersim::test::tiersim_stdout("report --db " + db + " --out '" + dir.file("report") +
                                    "' --no-validation --no-sensitivity",
                                out);
  const std::string md = tiersim::test::slurp(dir.file("report/report.md"));
  INFO(md);
  CHECK(md.find("## Input notes") != std::string::npos);
  CHECK(md.find("is likely absorbing the writes") != std::string::npos);
  CHECK(md.find("catalog drive 'generic-gen5'") != std::string::npos);
  CHECK(tiersim::test::slurp(dir.file("report/index.html"))
            .find("1 configuration rests on inputs with warnings") != std::string::npos);
}
}  // namespace app_cmd_run_test

namespace app_cmd_run_test {

TEST_CASE(
    "run and capacity: a serving model its GPUs cannot hold is answered with the degree that can",
    "[app][run][fit]") {
  tiersim::test::TempDir dir;
  const std::string scenario = dir.file("mixtral.yaml");
  std::ofstream(scenario) << "name: mixtral-on-one-l40s\n"
                             "hardware: {gpu: {model: L40S}, host: {model: generic-2s-ddr5}}\n"
                             "model: {name: mixtral-8x7b}\n"
                             "workload: {kind: serving, requests: 20, arrival_rate: 2, "
                             "prompt_tokens: 500, output_tokens: 50}\n";
  const std::string want =
      "closest that fits (capacity model, not simulated):\n"
      "  fewest GPUs: --set hardware.gpu.count=4 --set policy.parallelism.tensor=4  (4-way tensor "
      "parallelism)\n";
  // Exit code 3: it does not fit.
  REQUIRE(tiersim::test::shell("'" + tiersim::test::tiersim_bin() + "' run " + scenario + " > '" +
                               dir.file("run.txt") + "'") == 3);
  const std::string run = tiersim::test::slurp(dir.file("run.txt"));
  INFO(run);
  CHECK(run.find("does not fit") != std::string::npos);
  CHECK(run.find(want) != std::string::npos);
  const std::string capacity =
      tiersim::test::tiersim_stdout("capacity " + scenario, dir.file("capacity.txt"));
  INFO(capacity);
  CHECK(capacity.find("capacity: none: does not fit") != std::string::npos);
  CHECK(capacity.find(want) != std::string::npos);
  // --json gives the same answer as run --json does.
  const auto json = nlohmann::json::parse(
      tiersim::test::tiersim_stdout("capacity " + scenario + " --json", dir.file("capacity.json")));
  REQUIRE(json.contains("closest_fits"));
  CHECK(json["closest_fits"][0]["what"] == "fewest GPUs");
  CHECK(json["closest_fits"][0]["set"] ==
        nlohmann::json({"hardware.gpu.count=4", "policy.parallelism.tensor=4"}));
}

TEST_CASE("run: the accuracy line, in the table and in --json", "[app][run][accuracy]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim::test::tiersim_stdout(
      "run scenarios/inference/opt30b-l40s-gen5.yaml --set hardware.gpu.model=GB200",
      dir.file("out.txt"));
  INFO(text);
  CHECK(text.find("accuracy   +-") != std::string::npos);
  CHECK(text.find("group ZeRO-Inference") != std::string::npos);
  CHECK(text.find("unvalidated: GPU GB200 (no published row runs on it)") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(tiersim::test::tiersim_stdout(
      "run scenarios/inference/opt30b-l40s-gen5.yaml --json", dir.file("out.json")));
  REQUIRE(j.contains("accuracy"));
  CHECK(j["accuracy"]["group"] == "ZeRO-Inference");
  CHECK(j["accuracy"]["error_band_pct"].is_number());
  CHECK(j["accuracy"]["unvalidated"].empty());
  // Energy and power metrics are measured by their own groups, whatever the configuration.
  CHECK(j["accuracy"]["energy"]["node"]["group"] == "system energy");
  CHECK(j["accuracy"]["energy"]["gpu"]["group"] == "energy");
  CHECK(text.find("           energy and power at the wall +-") != std::string::npos);
}

}  // namespace app_cmd_run_test
