// Report files: written, self-contained, containing the comparison table and the sources.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/scenario_loader.hpp"
#include "reports/decision.hpp"
#include "reports/report.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace reports_report_test {

namespace store = tiersim::store;

using namespace tiersim;
using namespace tiersim::reports;

namespace {

using test::slurp;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

ReportInput two_runs(store::ResultsStore& store) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  sim::SimOptions traced;
  traced.trace = true;
  for (const char* f : {"llama3-70b-a100-4x-gen4-aio.yaml", "opt30b-a6000-quant-kvoffload.yaml"}) {
    const Scenario s = config::load_scenario(
        std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/" + f, opts);
    store.save(s, sim::simulate(s, traced), "test");
  }
  ReportInput in;
  in.database_name = "results.sqlite";
  in.tool_version = "test";
  in.runs = store.runs();
  in.validation.available = true;
  in.validation.measurements = 38;
  in.validation.mape_pct = 11.87;
  in.validation.max_abs_error_pct = 40;
  in.validation.out_of_sample_measurements = 20;
  in.validation.out_of_sample_mape_pct = 17.04;
  return in;
}

}  // namespace

TEST_CASE("report: HTML, Markdown and CSV carry the comparison table", "[report]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  ReportInput in = two_runs(store);
  CalibrationCurve c;
  c.target = "/mnt/nvme0";
  c.rw = "randread";
  c.queue_depth = 16;
  c.block_bytes = {4096, 65536, 1 << 20};
  c.bandwidth_gbps = {0.5, 3.0, 6.5};
  in.calibration.push_back(c);
  const ReportFiles files = write_report(in, dir.file("out"));

  const std::string html = slurp(files.html);
  const std::string md = slurp(files.markdown);
  const std::string csv = slurp(files.csv);
  for (const auto& r : in.runs) {
    CHECK(html.find(r.scenario_name) != std::string::npos);
    CHECK(md.find(r.scenario_name) != std::string::npos);
  }
  // The headline figure is the out-of-sample one; the in-sample mean only beside it.
  for (const std::string* text : {&html, &md})
    CHECK(text->find("validated against 38 published measurements: out-of-sample "
                     "(leave-one-source-out) mean absolute error 17.0% over 20, in-sample 11.9%") !=
          std::string::npos);
  CHECK(md.find("| throughput_tokens_per_s | tokens/s |") != std::string::npos);
  CHECK(html.find("<td class=\"name\">throughput_tokens_per_s</td>") != std::string::npos);
  // Self-contained: the scripts are inlined, nothing is fetched.
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("sourceMappingURL") == std::string::npos);
  CHECK(count(html, "vegaEmbed('#plot") >= 4 + 2 + 1);  // summary plots, 2 timelines, calibration
  CHECK(html.find("Measured bandwidth vs block size") != std::string::npos);
  // Sources: every provenance key of every run.
  for (const auto& r : in.runs)
    for (const auto& [key, source] : r.provenance) CHECK(md.find("`" + key + "`") != std::string::npos);

  std::size_t metrics = 0;
  for (const auto& r : in.runs) metrics += r.metrics.size();
  CHECK(count(csv, "\n") == metrics + 1);
  CHECK(csv.rfind("run_id,scenario_name,variant,scenario_hash,sweep,metric,value,unit\n", 0) == 0);
}

TEST_CASE("report: a compare variant's name labels its run; a run without one keeps its scenario's",
          "[report]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const std::string ref = std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/";
  const Scenario named = config::load_scenario(ref + "llama3-70b-a100-4x-gen4-aio.yaml", opts);
  const Scenario plain = config::load_scenario(ref + "opt30b-a6000-quant-kvoffload.yaml", opts);
  store.save(named, sim::simulate(named), "test", "", store::OnDuplicate::kReplace, "variant-under-test");
  store.save(plain, sim::simulate(plain), "test");
  ReportInput in;
  in.database_name = "results.sqlite";
  in.tool_version = "test";
  in.runs = store.runs();
  in.validation.error = "skipped";
  const ReportFiles files = write_report(in, dir.file("out"));
  const std::string html = slurp(files.html);
  const std::string md = slurp(files.markdown);
  const std::string csv = slurp(files.csv);
  // The variant name replaces the scenario name as the run's label (table, charts, sources).
  CHECK(count(md, "### variant-under-test\n") == 1);
  CHECK(md.find("### " + named.name + "\n") == std::string::npos);
  CHECK(count(md, "### " + plain.name + "\n") == 1);
  CHECK(html.find("<th>variant-under-test</th>") != std::string::npos);
  CHECK(html.find("\"run\":\"variant-under-test\"") != std::string::npos);  // chart data
  // The CSV keeps both: the scenario's name and the variant (empty for the other run).
  CHECK(csv.find("," + named.name + ",variant-under-test,") != std::string::npos);
  CHECK(csv.find("," + plain.name + ",,") != std::string::npos);
}

TEST_CASE("report: missing energy and cost metrics are reported, not plotted", "[report]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  ReportInput in = two_runs(store);
  in.validation = {};
  in.validation.error = "skipped";
  for (auto& r : in.runs) {
    std::erase_if(r.metrics, [](const sim::Metric& m) {
      return m.name.rfind("energy", 0) == 0 || m.name.rfind("usd", 0) == 0;
    });
  }
  const std::string html = slurp(write_report(in, dir.file("out")).html);
  CHECK(html.find("Not plotted (no run has the metrics): energy per token, energy by phase, "
                  "cost per million tokens") !=
        std::string::npos);
  CHECK(html.find("Model validation could not be run (skipped)") != std::string::npos);
}

TEST_CASE("report: a missing vendored script is an IoError and writes nothing", "[report]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  ReportInput in = two_runs(store);
  in.vendor_dir = dir.file("no-vendor");
  CHECK_THROWS_AS(write_report(in, dir.file("out")), IoError);
  CHECK_FALSE(std::filesystem::exists(dir.file("out/index.html")));
}

TEST_CASE("report: files the user put in --out are not replaced, links not followed",
          "[report]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  const ReportInput in = two_runs(store);
  const std::string out = dir.file("out");
  std::filesystem::create_directories(out);
  // The user's own page in the folder, and a link planted where metrics.csv goes.
  std::ofstream(out + "/index.html") << "my page";
  std::ofstream(dir.file("precious.csv")) << "keep me";
  std::filesystem::create_symlink(dir.file("precious.csv"), out + "/metrics.csv");
  CHECK_THROWS_WITH(write_report(in, out), Catch::Contains("index.html") &&
                                               Catch::Contains("not written by tiersim"));
  // Refused before anything was written: no report.md next to the user's files.
  CHECK(slurp(out + "/index.html") == "my page");
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));
  std::filesystem::remove(out + "/index.html");
  CHECK_THROWS_WITH(write_report(in, out), Catch::Contains("symbolic link"));
  CHECK(slurp(dir.file("precious.csv")) == "keep me");
  OutputOptions force;
  force.force = true;
  write_report(in, out, force);
  CHECK(slurp(dir.file("precious.csv")) == "keep me");
  CHECK(slurp(out + "/metrics.csv").rfind("run_id,", 0) == 0);
  // tiersim's own files are replaced on the next run without --force.
  CHECK_NOTHROW(write_report(in, out));
}

TEST_CASE("report: Markdown syntax in names is shown as text, never as a link", "[report]") {
  CHECK(md_escape("[click](https://evil.example)") ==
        "\\[click\\](https\\://evil.example)");
  CHECK(md_escape("![x](y.png) **b** ~s~ # h") == "!\\[x\\](y.png) \\*\\*b\\*\\* \\~s\\~ \\# h");
  CHECK(md_escape("see www.evil.example") == "see www\\.evil.example");
  CHECK(md_escape("throughput_tokens_per_s a|b") == "throughput_tokens_per_s a\\|b");
}

TEST_CASE("report: escaping", "[report]") {
  CHECK(csv_escape("a,b") == "\"a,b\"");
  CHECK(csv_escape("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_escape("plain") == "plain");
  CHECK(html_escape("<b>&\"") == "&lt;b&gt;&amp;&quot;");
  CHECK(provenance_kind("catalog: NVIDIA datasheet") == "catalog");
  CHECK(provenance_kind("override") == "override");
}

TEST_CASE("the validation sentence quotes each group's own verdict and reason",
          "[report]") {
  ValidationInfo v;
  v.available = true;
  ValidationInfo::Group serving;
  serving.name = "serving stack";
  serving.configurations = 1;
  serving.measurements = 11;
  serving.mape_pct = 19.6;
  serving.max_abs_error_pct = 49.1;
  serving.provisional = true;
  serving.why_provisional = "outside the bound for a newly modelled group";
  ValidationInfo::Group eager;
  eager.name = "eager, no offload";
  eager.configurations = 2;
  v.groups = {serving, eager};
  const std::string s = validation_sentence(v);
  // No out-of-sample row: the sentence says so and quotes the in-sample figure as such.
  CHECK_THAT(s, Catch::Contains("serving stack (1 configuration): no out-of-sample measurement "
                                "(every one of its 11 published measurements fed a constant it "
                                "uses), in-sample mean absolute error 19.6% (worst case 49.1%), "
                                "provisional: outside the bound for a newly modelled group;"));
  CHECK_THAT(s, Catch::Contains("error bands use the out-of-sample, leave-one-source-out error"));
  CHECK_THAT(s, Catch::Contains("eager, no offload (2 configurations): no published case "
                                "covers it, unvalidated."));
  CHECK_THAT(s, !Catch::Contains("not modelled yet"));
}

TEST_CASE("the error band is the group's out-of-sample error, not its in-sample mean", "[report]") {
  store::ResultsStore store(":memory:");
  ReportInput in = two_runs(store);
  ValidationInfo::Group g;
  g.name = "ZeRO-Inference";
  g.configurations = 2;
  g.measurements = 30;
  g.mape_pct = 12.2;
  g.max_abs_error_pct = 47.8;
  g.out_of_sample_measurements = 5;
  g.out_of_sample_mape_pct = 18.7;
  g.out_of_sample_max_abs_error_pct = 47.8;
  in.validation.groups = {g};
  in.decision.metric = "throughput_tokens_per_s";
  in.decision.lower_is_better = false;
  in.decision.groups = {"ZeRO-Inference", "ZeRO-Inference"};
  in.decision.descriptions = {"a", "b"};
  const std::string md = decision_markdown(in, {"a", "b"});
  CHECK_THAT(md, Catch::Contains("+-18.7 % (out-of-sample validation error of group ZeRO-Inference"));
  CHECK_THAT(md, !Catch::Contains("+-12.2"));
  CHECK_THAT(validation_sentence(in.validation),
             Catch::Contains("out-of-sample mean absolute error 18.7% over 5 published "
                             "measurements (worst case 47.8%), in-sample 12.2% over 30"));
  // Every row in-sample: no band, and the text says why.
  in.validation.groups[0].out_of_sample_measurements = 0;
  const std::string none = decision_markdown(in, {"a", "b"});
  CHECK_THAT(none, Catch::Contains("no out-of-sample error band: every published case of its kind (ZeRO-Inference) fed a constant it uses"));
  CHECK_THAT(none, !Catch::Contains("+-12.2"));
  // A part no published row anchors is named beside the band.
  in.decision.unvalidated = {{"GPU A100-40GB"}, {"GPU A100-40GB"}};
  CHECK_THAT(decision_markdown(in, {"a", "b"}),
             Catch::Contains("unvalidated: GPU A100-40GB (no published row runs on it)"));
}

TEST_CASE("report: the notes on a configuration's inputs, and a line at the top for warnings",
          "[report][notes]") {
  test::TempDir dir;
  store::ResultsStore store(":memory:");
  ReportInput in = two_runs(store);
  const ReportFiles plain = write_report(in, dir.file("plain"));
  CHECK(slurp(plain.html).find("Input notes") == std::string::npos);
  CHECK(slurp(plain.markdown).find("Input notes") == std::string::npos);

  in.notes = {{},
              {{InputNote::Kind::kWarning, "hardware.nvme.profile",
                "calibration warned: writes measured 2.10x faster than reads"}}};
  const ReportFiles files = write_report(in, dir.file("out"));
  const std::string html = slurp(files.html);
  const std::string md = slurp(files.markdown);
  CHECK(html.find("1 configuration rests on inputs with warnings") != std::string::npos);
  CHECK(html.find("<h2 id=\"input-notes\">Input notes</h2>") != std::string::npos);
  CHECK(html.find("writes measured 2.10x faster than reads") != std::string::npos);
  CHECK(md.find("## Input notes") != std::string::npos);
  CHECK(md.find("writes measured 2.10x faster than reads") != std::string::npos);
}
TEST_CASE("a report counts a group once per run that it bands", "[report]") {
  // A training run reports no energy metrics and no run reports a prefix-caching first-token
  // time: the energy group bands one configuration here, and KV cache reuse none. The report
  // validates against a data folder with one reference row of each of the three groups (the
  // shipped catalog and groups): what is counted does not depend on how many rows a group has,
  // and the whole reference set is validated by its own tests.
  test::TempDir dir;
  const std::string src = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  const std::string data = dir.file("data");
  std::filesystem::create_directories(data);
  std::filesystem::copy(src + "/catalog", data + "/catalog",
                        std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(data + "/validation");
  std::filesystem::copy_file(src + "/validation/groups.yaml", data + "/validation/groups.yaml");
  std::ofstream(data + "/validation/derivations.yaml") << "derived_constants: []\n";
  std::filesystem::create_directories(data + "/reference");
  for (const char* row : {"dgx2-zero3.yaml", "mlenergy-h100-llama3.1-8b-b32.yaml",
                          "vllm-offload-h100-llama3.1-8b-10k.yaml"})
    std::filesystem::copy_file(src + "/reference/" + row, data + "/reference/" + row);
  std::filesystem::create_directories(data + "/reference/traces");
  std::filesystem::copy_file(src + "/reference/traces/vllm-offload-h100-llama3.1-8b-10k.csv",
                             data + "/reference/traces/vllm-offload-h100-llama3.1-8b-10k.csv");
  const std::string db = dir.file("r.db");
  test::tiersim_stdout(
      "compare scenarios/training/dgx2-zero3.yaml "
      "scenarios/inference/llama2-7b-fp8-l40s-optimized.yaml --db '" +
          db + "'",
      dir.file("compare.txt"));
  const std::string json = test::tiersim_stdout("report --db '" + db + "' --data-dir '" + data +
                                                    "' --out '" + dir.file("report") + "' --json",
                                                dir.file("out.json"));
  REQUIRE_THAT(json, Catch::Contains("\"available\": true"));
  CHECK_THAT(json, Catch::Contains("training (1 configuration)"));
  CHECK_THAT(json, Catch::Contains("; energy (1 configuration)"));
  CHECK_THAT(json, !Catch::Contains("KV cache reuse"));
}

}  // namespace reports_report_test
