// `tiersim compare` as people read it: columns that stay in line whatever the length of a value
// or ratio, values in people's forms, and each configuration's time breakdown.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_cmd_compare_test {

namespace {

std::string tiersim_output(const std::string& args, tiersim::test::TempDir& dir) {
  return tiersim::test::tiersim_stdout(args, dir.file("out.txt"));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Every row of the table in `text` starts each variant's cell where its header starts: after a
// space, with a character. `variants`: how many columns after metric and unit.
void check_columns(const std::string& text, std::size_t variants) {
  const std::vector<std::string> lines = lines_of(text);
  // The table: from the header ("metric  unit  <variants>") to the first empty line.
  std::size_t head = 0;
  while (head < lines.size() && lines[head].rfind("metric ", 0) != 0) ++head;
  REQUIRE(head < lines.size());
  // Column starts: where a run of spaces in the header ends.
  std::vector<std::size_t> starts;
  const std::string& h = lines[head];
  for (std::size_t i = 1; i < h.size(); ++i)
    if (h[i] != ' ' && h[i - 1] == ' ') starts.push_back(i);
  REQUIRE(starts.size() == variants + 1);  // unit + the variants
  std::size_t rows = 0;
  for (std::size_t k = head + 1; k < lines.size() && !lines[k].empty(); ++k, ++rows) {
    const std::string& line = lines[k];
    INFO(line);
    for (std::size_t c = 1; c < starts.size(); ++c) {
      const std::size_t s = starts[c];
      REQUIRE(s < line.size());
      CHECK(line[s - 1] == ' ');
      CHECK(line[s] != ' ');
    }
  }
  CHECK(rows > 8);
}

}  // namespace

TEST_CASE("compare: every row of the table starts each column at the same place",
          "[app][compare]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim_output("compare scenarios/cost/opt30b-l40s.yaml", dir);
  check_columns(text, 5);
  // Values with ratios ("$39,132 (0.4965x)"), dollars as people write them.
  CHECK(text.find("$78,816") != std::string::npos);
  CHECK(text.find("x)") != std::string::npos);
}

TEST_CASE("compare: short names and long ratios keep the columns in line", "[app][compare]") {
  // One-letter variant names under cells like "62,209 (0.06389x)": a column as wide as its name
  // would be overrun by its cells.
  tiersim::test::TempDir dir;
  const std::string scenario =
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/opt30b-l40s-dram.yaml";
  std::ofstream(dir.file("short.yaml")) << "compare:\n  variants:\n    - name: a\n      file: "
                                        << scenario << "\n    - name: b\n      file: " << scenario
                                        << "\n      set: {workload.batch: 8}\n";
  const std::string text = tiersim_output("compare '" + dir.file("short.yaml") + "'", dir);
  INFO(text);
  check_columns(text, 2);
}

TEST_CASE("compare: each configuration's time breakdown, with readable bottlenecks",
          "[app][compare][breakdown]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim_output("compare scenarios/cost/opt30b-l40s.yaml", dir);
  CHECK(text.find("where the time goes") != std::string::npos);
  // The 1x-l40s-dram variant: its header and the prompt's KV cache write-back, bound by the host
  // CPUs that copy it.
  const auto at = text.find("\n1x-l40s-dram  (total ");
  REQUIRE(at != std::string::npos);
  const std::string section = text.substr(at, text.find("\n\n", at + 1) - at);
  INFO(section);
  CHECK(section.find("prefill KV cache write-back to host") != std::string::npos);
  CHECK(section.find("host CPUs (cpu)") != std::string::npos);
  CHECK(section.find("phase ") != std::string::npos);
}

TEST_CASE("compare: a training run beside an inference run shows both breakdowns",
          "[app][compare][breakdown]") {
  // Training reports no total_s (its phases cover the iterations it simulates): the command
  // stopped with "internal error: the run reported no metric 'total_s'".
  tiersim::test::TempDir dir;
  const std::string text = tiersim_output(
      "compare scenarios/training/dgx2-zero3.yaml "
      "scenarios/inference/llama2-7b-fp8-l40s-optimized.yaml",
      dir);
  CHECK(text.find("\ndgx2-zero3  (total ") != std::string::npos);
  CHECK(text.find("\nllama2-7b-fp8-l40s-optimized  (total ") != std::string::npos);
}
}  // namespace app_cmd_compare_test

namespace app_cmd_compare_test {

TEST_CASE("compare: each configuration's error band, in the table and in --json",
          "[app][compare][accuracy][release-only]") {
  tiersim::test::TempDir dir;
  const std::string text = tiersim_output("compare scenarios/cost/opt30b-l40s.yaml", dir);
  INFO(text);
  std::string band_row;
  for (const auto& line : lines_of(text))
    if (line.rfind("error band ", 0) == 0) band_row = line;
  // The offload boxes are ZeRO-Inference (an established group); six GPUs gathering partitions
  // are its data-parallel group, still provisional.
  CHECK(band_row.find("+-") != std::string::npos);
  CHECK(band_row.find("prov.") != std::string::npos);
  CHECK(text.find("\nerror band: the out-of-sample validation error") != std::string::npos);
  const std::string json = tiersim_output("compare scenarios/cost/opt30b-l40s.yaml --json", dir);
  CHECK(json.find("\"accuracy\"") != std::string::npos);
  CHECK(json.find("\"group\": \"ZeRO-Inference data parallel\"") != std::string::npos);
}

}  // namespace app_cmd_compare_test
