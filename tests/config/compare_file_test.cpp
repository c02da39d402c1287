// Comparison files: strict errors with file, line and key; baseline first; `set:` entries applied.
#include <catch2/catch.hpp>

#include <fstream>

#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "tests/temp_dir.hpp"
#include "tests/support.hpp"

namespace config_compare_file_test {

using namespace tiersim;
using namespace tiersim::config;
using tiersim::test::config_error;
using tiersim::test::replace;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

const char* kCompare =
    "compare:\n"         // 1
    "  name: two\n"      // 2
    "  baseline: big\n"  // 3
    "  set: {model.name: opt-30b, workload.kind: inference, workload.prompt_tokens: 64, "
    "workload.gen_tokens: 4}\n"                           // 4
    "  variants:\n"                                       // 5
    "    - name: small\n"                                 // 6
    "      scenario:\n"                                   // 7
    "        name: s\n"                                   // 8
    "        hardware: {gpu: {model: L40S, count: 1}}\n"  // 9
    "        policy: {weights: cpu}\n"                    // 10
    "      set: {workload.batch: 8}\n"                    // 11
    "    - name: big\n"                                   // 12
    "      scenario:\n"                                   // 13
    "        name: b\n"                                   // 14
    "        hardware: {gpu: {model: L40S, count: 2}}\n"  // 15
    "        policy: {weights: cpu}\n";                   // 16

std::string write(const test::TempDir& dir, const std::string& text) {
  const std::string path = dir.file("cmp.yaml");
  std::ofstream(path) << text;
  return path;
}


}  // namespace

TEST_CASE("a comparison file puts its baseline first and applies common and variant sets",
          "[config][compare]") {
  test::TempDir dir;
  const Comparison cmp = read_compare_inputs({write(dir, kCompare)});
  REQUIRE(cmp.variants.size() == 2);
  CHECK(cmp.name == "two");
  CHECK(cmp.variants[0].name == "big");
  LoadOptions o;
  o.data_dir = kData;
  const Scenario small = load_variant(find_variant(cmp, "small", "--variant"), o);
  CHECK(small.model.name == "opt-30b");
  CHECK(small.inference.batch == 8);
  o.overrides = {"workload.batch=3"};  // the command line's --set comes after the file's
  CHECK(load_variant(cmp.variants[1], o).inference.batch == 3);
}

TEST_CASE("comparison file errors name the file, the line and the key", "[config][compare]") {
  test::TempDir dir;
  const auto baseline = config_error([&] {
    read_compare_inputs({write(dir, replace(kCompare, "baseline: big", "baseline: bug"))});
  });
  CHECK(baseline.line() == 3);
  CHECK(baseline.key_path() == "compare.baseline");
  CHECK(baseline.file() == dir.file("cmp.yaml"));

  const auto key = config_error([&] {
    read_compare_inputs(
        {write(dir, replace(kCompare, "      set: {workload", "      sett: {workload"))});
  });
  CHECK(key.line() == 11);
  CHECK_THAT(key.what(), Catch::Contains("did you mean 'set'?"));

  const auto variant = config_error([&] {
    read_compare_inputs(
        {write(dir, replace(kCompare, "    - name: big\n", "    - 7\n    - name: big\n"))});
  });
  CHECK(variant.line() == 12);

  // Two variants of one name: --variant and the baseline could not tell them apart.
  const auto twice = config_error([&] {
    read_compare_inputs(
        {write(dir, replace(kCompare, "    - name: big\n", "    - name: small\n"))});
  });
  CHECK(twice.line() == 12);
  CHECK(twice.key_path() == "compare.variants[1].name");
  CHECK_THAT(twice.what(), Catch::Contains("'small' names an earlier variant too"));

  // A scenario file's path under scenario: (an inline map) is pointed to file:.
  const auto path = config_error([&] {
    read_compare_inputs({write(
        dir, replace(kCompare,
                     "      scenario:\n        name: b\n        hardware: {gpu: {model: L40S, "
                     "count: 2}}\n        policy: {weights: cpu}\n",
                     "      scenario: ../big.yaml\n"))});
  });
  CHECK(path.line() == 13);
  CHECK_THAT(path.what(), Catch::Contains("expected a map (an inline scenario)") &&
                              Catch::Contains("write file: ../big.yaml"));

  const Comparison cmp = read_compare_inputs({write(dir, kCompare)});
  CHECK_THROWS_WITH(find_variant(cmp, "smal", "--variant"),
                    Catch::Contains("did you mean 'small'?"));

  // An error inside an inline scenario names its line in the comparison file: the scenario loads
  // from the file's own tree, not from text dumped out of it, whose lines are not the file's.
  const Comparison typo = read_compare_inputs(
      {write(dir, replace(kCompare, "policy: {weights: cpu}", "policy: {weigths: cpu}"))});
  LoadOptions o;
  o.data_dir = kData;
  for (const bool prepared : {false, true}) {
    const auto inline_error = config_error([&] {
      const VariantSpec& small = find_variant(typo, "small", "--variant");
      if (prepared)
        VariantSource(small, o).load({});
      else
        load_variant(small, o);
    });
    CHECK(inline_error.file() == dir.file("cmp.yaml"));
    CHECK(inline_error.line() == 10);
    CHECK(inline_error.key_path() == "policy.weigths");
  }
}

TEST_CASE("a variant source loads as load_variant does, with extra settings last",
          "[config][compare][setting]") {
  test::TempDir dir;
  const Comparison cmp = read_compare_inputs({write(dir, kCompare)});
  const std::string file_variant = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  VariantSpec from_file;
  from_file.file = file_variant;
  from_file.display = file_variant;
  for (const VariantSpec* v :
       std::vector<const VariantSpec*>{&cmp.variants[0], &cmp.variants[1], &from_file}) {
    LoadOptions o;
    o.data_dir = kData;
    o.overrides = {"workload.prompt_tokens=32"};
    const VariantSource source(*v, o);
    for (const std::vector<std::string>& extra :
         std::vector<std::vector<std::string>>{{}, {"workload.batch=5"}, {"workload.batch=0"}}) {
      LoadOptions text = o;
      text.overrides.insert(text.overrides.end(), extra.begin(), extra.end());
      std::string a_error, b_error;
      Scenario a, b;
      try {
        a = load_variant(*v, text);
      } catch (const Error& e) {
        a_error = e.what();
      }
      try {
        b = source.load(extra);
      } catch (const Error& e) {
        b_error = e.what();
      }
      CHECK(a_error == b_error);
      CHECK(a.resolved_yaml == b.resolved_yaml);
      CHECK(a.hash == b.hash);
      CHECK(a.file == b.file);
    }
  }
}

TEST_CASE("compare inputs: a comparison given as text is the comparison file", "[compare]") {
  const std::string scenario = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  const std::string text =
      "{\"compare\": {\"name\": \"drives\", \"baseline\": \"four\", "
      "\"variants\": [{\"name\": \"eight\", \"file\": \"" +
      scenario +
      "\", \"set\": {\"hardware.nvme.count\": 8}}, {\"name\": \"four\", "
      "\"file\": \"" +
      scenario + "\"}]}}";
  const Comparison cmp = read_compare_inputs({CompareInput{text, false}});
  CHECK(cmp.name == "drives");
  REQUIRE(cmp.variants.size() == 2);
  CHECK(cmp.variants[0].name == "four");  // the baseline goes first
  CHECK(cmp.variants[1].sets.size() == 1);

  // A scenario as text is one inline variant; mixed with a file, both in order.
  const Comparison mixed = read_compare_inputs(
      {CompareInput{scenario, true}, CompareInput{"name: x\n", false, "<dict>"}});
  REQUIRE(mixed.variants.size() == 2);
  CHECK(mixed.variants[0].file == scenario);
  CHECK(mixed.variants[1].inline_yaml == "name: x\n");
  CHECK(mixed.variants[1].display == "<dict>");

  // A comparison with a misspelt key names it, as for a file.
  CHECK_THROWS_WITH(read_compare_inputs({CompareInput{"{\"compare\": "
                                                      "{\"variant\": []}}",
                                                      false}}),
                    Catch::Contains("variant"));
}
}  // namespace config_compare_file_test
