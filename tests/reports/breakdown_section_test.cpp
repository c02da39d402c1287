// The report's "Where the time goes" section (reports/breakdown_section.cpp): each stored run's
// phase_* metrics as a stacked bar and a table, in the HTML and the Markdown report.
#include "reports/breakdown_section.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "config/scenario_loader.hpp"
#include "reports/report.hpp"
#include "sim/breakdown.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace reports_breakdown_section_test {

using namespace tiersim;

namespace {

// Stores `files` (under scenarios/) run with or without the breakdown; returns the stored runs.
std::vector<store::StoredRun> stored(store::ResultsStore& db, const std::vector<std::string>& files,
                                     bool breakdown) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  sim::SimOptions o;
  o.breakdown = breakdown;
  for (const auto& f : files)
    db.save(config::load_scenario(opts.data_dir + "/" + f, opts),
            sim::simulate(config::load_scenario(opts.data_dir + "/" + f, opts), o), "test");
  return db.runs();
}

}  // namespace

TEST_CASE("breakdown section: a stacked bar and a table of every run's phases",
          "[reports][breakdown]") {
  store::ResultsStore db(":memory:");
  const auto runs = stored(db,
                           {"inference/opt30b-l40s-dram.yaml",
                            "reference/llama3-70b-a100-4x-gen4-aio.yaml"},
                           true);
  const std::vector<std::string> labels = {"dram", "nvme"};
  const auto parts = reports::breakdown_parts(runs, labels);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].html.find("Where the time goes") != std::string::npos);
  const auto& spec = parts[0].spec;
  REQUIRE_FALSE(spec.is_null());
  // One bar segment per phase metric of each run, labelled for people, adding up to total_s.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::size_t phases = 0;
    for (const auto& m : runs[i].metrics) phases += sim::is_phase_metric_name(m.name) ? 1 : 0;
    double seconds = 0;
    std::size_t segments = 0;
    for (const auto& v : spec["data"]["values"])
      if (v["run"] == labels[i]) {
        seconds += v["seconds"].get<double>();
        ++segments;
      }
    CHECK(segments == phases);
    CHECK(seconds == Approx(runs[i].find(sim::metric::kTotalS).value()));
  }
  const std::string table = parts[1].html;
  CHECK(table.find("<td class=\"name\">prefill: KV cache write-back to host</td>") !=
        std::string::npos);
  CHECK(table.find("%)</td>") != std::string::npos);

  const std::string md = reports::breakdown_markdown(runs, labels);
  CHECK(md.rfind("## Where the time goes", 0) == 0);
  CHECK(md.find("| prefill: KV cache write-back to host | 150.8 s (59.2%) |") != std::string::npos);
}

TEST_CASE("breakdown section: nothing for runs without phases; the comparison table leaves "
          "phase_* rows to the section and names bottlenecks for people",
          "[reports][breakdown]") {
  store::ResultsStore plain(":memory:");
  const auto none = stored(plain, {"inference/opt30b-l40s-dram.yaml"}, false);
  CHECK(reports::breakdown_parts(none, {"a"}).empty());
  CHECK(reports::breakdown_markdown(none, {"a"}).empty());

  store::ResultsStore db(":memory:");
  reports::ReportInput in;
  in.database_name = "results.sqlite";
  in.tool_version = "test";
  in.runs = stored(db, {"inference/opt30b-l40s-dram.yaml"}, true);
  test::TempDir dir;
  const std::string md = test::slurp(reports::write_report(in, dir.file("out")).markdown);
  CHECK(md.find("## Where the time goes") != std::string::npos);
  CHECK(md.find("| phase_") == std::string::npos);
  CHECK(md.find("| bottleneck | | host CPUs (cpu) |") != std::string::npos);
}
}  // namespace reports_breakdown_section_test
