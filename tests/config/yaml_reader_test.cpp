// The strict YAML reader: sizes, suggestions, typed scalars and their error messages.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

namespace config_yaml_reader_test {

using namespace tiersim;
using namespace tiersim::config;

TEST_CASE("size strings parse with decimal and binary units", "[config][yaml]") {
  CHECK(parse_size("4096") == 4096.0);
  CHECK(parse_size("4KiB") == 4096.0);
  CHECK(parse_size("16MiB") == 16.0 * 1024 * 1024);
  CHECK(parse_size("1GiB") == 1024.0 * 1024 * 1024);
  CHECK(parse_size("1.5GB") == 1.5e9);
  CHECK(parse_size("2 TB") == 2e12);
  CHECK(parse_size("8mib") == 8.0 * 1024 * 1024);
  CHECK_FALSE(parse_size("abc"));
  CHECK_FALSE(parse_size("12XB"));
  CHECK_FALSE(parse_size(""));
}

TEST_CASE("near-match suggestions", "[config][yaml]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(nearest("promt_tokens", {"batch", "prompt_tokens", "gen_tokens"}) == "prompt_tokens");
  CHECK(nearest("A100", {"L40S", "A100-40GB", "H200"}) == "A100-40GB");
  CHECK(nearest("zzzzzz", {"batch", "kind"}).empty());
  CHECK(did_you_mean("bach", {"batch"}) == " (did you mean 'batch'?)");
}

TEST_CASE("numbers round-trip through format_number", "[config][yaml]") {
  for (double v : {0.1, 96.0, 1.5e9, 1.0 / 3.0, 16777216.0}) {
    CHECK(parse_size(format_number(v)) == v);
  }
}

TEST_CASE("typed scalars report file, line, key and what was expected", "[config][yaml]") {
  const YNode root = parse_yaml_text("a: 1\nb: abc\nc: [1, 2]\nd: -3\ne: 2.5\n", "t.yaml");
  CHECK(root.require("a", "x").as_int(1, 10) == 1);
  try {
    (void)root.require("b", "x").as_int(1, 2000000000);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "t.yaml");
    CHECK(e.line() == 2);
    CHECK(e.key_path() == "b");
    CHECK_THAT(e.what(), Catch::Contains("expected a positive integer, got 'abc'"));
  }
  CHECK_THROWS_WITH(root.require("c", "x").as_double(0, 1), Catch::Contains("got a list"));
  CHECK_THROWS_WITH(root.require("d", "x").as_size_bytes(),
                    Catch::Contains("expected a positive size"));
  CHECK_THROWS_WITH(root.require("e", "x").as_int(0, 10), Catch::Contains("got '2.5'"));
  CHECK_THROWS_WITH(root.require("zz", "a thing"), Catch::Contains("t.yaml:1: zz: missing"));
}

TEST_CASE("YAML syntax errors become ConfigError with the line", "[config][yaml]") {
  try {
    (void)parse_yaml_text("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "bad.yaml");
    CHECK(e.line() >= 2);
    CHECK_THAT(e.what(), Catch::Contains("YAML syntax error"));
  }
}

TEST_CASE("a tab in the indentation is named as the cause", "[config][yaml]") {
  try {
    (void)parse_yaml_text("name: t\nhardware:\n\tgpu: {model: L40S}\n", "tab.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 3);
    CHECK_THAT(e.what(), Catch::Contains("indented with a tab"));
  }
  // Not for other syntax errors, nor a tab inside a value.
  try {
    (void)parse_yaml_text("a: \"x\ty\"\nb: [1, 2\n", "bad.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), !Catch::Contains("tab"));
  }
}

TEST_CASE("unknown and duplicate keys are errors", "[config][yaml]") {
  const YNode root = parse_yaml_text("batch: 1\nbach: 2\n", "k.yaml");
  try {
    root.check_keys({"batch", "kind"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 2);
    CHECK(e.key_path() == "bach");
    CHECK_THAT(e.what(), Catch::Contains("did you mean 'batch'?"));
    CHECK_THAT(e.what(), Catch::Contains("valid keys: batch, kind"));
  }
  const YNode dup = parse_yaml_text("a: 1\na: 2\n", "d.yaml");
  CHECK_THROWS_WITH(dup.entries(), Catch::Contains("duplicate key"));
}

TEST_CASE("a missing file is a ConfigError", "[config][yaml]") {
  CHECK_THROWS_AS(parse_yaml_file("no/such/file.yaml"), ConfigError);
}

TEST_CASE("input files are bounded regular files", "[config][yaml]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tiersim-reader-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};

  // A directory: a clear error naming it, not a stream exception ("basic_filebuf::underflow").
  try {
    (void)parse_yaml_file(dir.string(), "scenario file");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == dir.string());
    CHECK_THAT(e.what(), Catch::Contains("is a directory"));
  }
  // A device that never ends: refused before reading (it used to be read until memory ran out).
  if (fs::exists("/dev/zero")) {
    CHECK_THROWS_WITH(read_input_file("/dev/zero", "scenario file"),
                      Catch::Contains("/dev/zero") && Catch::Contains("not a regular file"));
  }
  // One byte over the limit is refused with the limit in the message; at the limit it is read.
  const fs::path big = dir / "big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    const std::string line(1023, '#');
    for (std::size_t i = 0; i < kMaxInputFileBytes / 1024; ++i) out << line << '\n';
  }
  CHECK(read_input_file(big.string(), "scenario file").size() == kMaxInputFileBytes);
  std::ofstream(big, std::ios::binary | std::ios::app) << '#';
  CHECK_THROWS_WITH(read_input_file(big.string(), "scenario file"),
                    Catch::Contains("big.yaml") && Catch::Contains("16 MiB"));
}

TEST_CASE("a UTF-8 byte order mark is dropped from input files", "[config][yaml]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tiersim-bom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path f = dir / "bom.yaml";
  std::ofstream(f, std::ios::binary) << "\xEF\xBB\xBFname: x\n";
  CHECK(read_input_file(f.string(), "scenario file") == "name: x\n");
  CHECK(parse_yaml_file(f.string()).get("name")->as_string() == "x");
  fs::remove_all(dir);
}

TEST_CASE("a second YAML document is an error, not silently dropped", "[config][yaml]") {
  try {
    (void)parse_yaml_text("a: 1\n---\nb: 2\n", "two.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "two.yaml");
    CHECK(e.line() == 2);  // the '---' that starts it
    CHECK_THAT(e.what(), Catch::Contains("second YAML document"));
  }
  CHECK(parse_yaml_text("---\na: 1\n", "one.yaml").is_map());  // a leading '---' is fine
}

TEST_CASE("a size too large for a double is malformed, not infinite", "[config][yaml]") {
  CHECK_FALSE(parse_size("1e300GB"));
  CHECK(parse_size("1e300") == 1e300);
}

TEST_CASE("a malformed stream that makes yaml-cpp's LoadAll run away is a syntax error",
          "[config][yaml]") {
  // Found by the fuzzer (tests/fuzz/): a shipped scenario with two lines spliced together. Read
  // with LoadAll, yaml-cpp produced empty documents until the process ran out of memory.
  const std::string path =
      std::string(TIERSIM_SOURCE_DIR) + "/tests/fuzz/seeds/regression-loadall-runaway.yaml";
  const std::string text = read_input_file(path, "test input");
  CHECK_NOTHROW(parse_yaml_text(text, "x.yaml"));  // not std::bad_alloc: a bounded parse
  // The second-document check still works where there are document markers.
  CHECK_THROWS_WITH(parse_yaml_text("a: 1\n---\nb: 2\n", "x.yaml"),
                    Catch::Contains("x.yaml:2") && Catch::Contains("second YAML document"));
  CHECK_NOTHROW(parse_yaml_text("---\na: 1\n...\n", "x.yaml"));
}
}  // namespace config_yaml_reader_test
