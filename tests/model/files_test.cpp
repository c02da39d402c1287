// The one rule for input files and the one rule for output files (model/files.hpp).
#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "model/errors.hpp"
#include "model/files.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace tiersim::model_files_test {
namespace {

namespace fs = std::filesystem;

void put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("input files: regular files only, and a size limit", "[model][files]") {
  test::TempDir dir;
  put(dir.file("a.csv"), "x,y\n");
  CHECK(check_input_file(dir.file("a.csv"), "trace file", 100) == 4);
  CHECK_THROWS_WITH(check_input_file(dir.file("a.csv"), "trace file", 3),
                    Catch::Contains("larger than the limit"));
  CHECK_THROWS_WITH(check_input_file("/dev/zero", "trace file", 100, "workload.trace"),
                    Catch::Contains("/dev/zero: workload.trace: is not a regular file"));
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  // A FIFO would block an open until a writer comes: refused without opening it.
  CHECK_THROWS_WITH(check_input_file(dir.file("fifo"), "scenario file", 100),
                    Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(check_input_file(dir.str(), "scenario file", 100),
                    Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(check_input_file(dir.file("none"), "scenario file", 100),
                    Catch::Contains("no such file"));
  CHECK(file_content_hash(dir.file("a.csv"), "trace file", 100) !=
        (put(dir.file("b.csv"), "x,z\n"), file_content_hash(dir.file("b.csv"), "trace file", 100)));
}

TEST_CASE("input files: a byte order mark is dropped; messages show what cannot be seen",
          "[model][files]") {
  std::string text = "\xEF\xBB\xBFname: x";
  CHECK(strip_utf8_bom(text));
  CHECK(text == "name: x");
  CHECK_FALSE(strip_utf8_bom(text));
  CHECK(excerpt("\xEF\xBB\xBFTIMESTAMP\tx") == "\\xEF\\xBB\\xBFTIMESTAMP\\x09x");
  const std::string huge(5u << 20, 'z');
  const std::string shown = excerpt(huge, 50);
  CHECK(shown.size() < 100);
  CHECK_THAT(shown, Catch::EndsWith("... (5242880 bytes in all)"));
  CHECK(excerpt("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 text stays as it is
}

TEST_CASE("output files: a file tiersim did not write is refused, then replaced with force",
          "[model][files]") {
  test::TempDir dir;
  const std::string mine = dir.file("index.html");
  put(mine, "the user's own page");
  try {
    write_output_file(mine, "report", "report file");
    FAIL("replaced the user's file");
  } catch (const IoError& e) {
    CHECK_THAT(e.what(), Catch::Contains("was not written by tiersim"));
    CHECK_THAT(e.what(), Catch::Contains("--force"));
  }
  CHECK(test::slurp(mine) == "the user's own page");
  OutputOptions force;
  force.force = true;
  write_output_file(mine, "report 1", "report file", force);
  CHECK(test::slurp(mine) == "report 1");
  // Now listed in the folder's manifest: replaced again without force.
  write_output_file(mine, "report 2", "report file");
  CHECK(test::slurp(mine) == "report 2");
  CHECK_THAT(test::slurp(dir.file(kOutputManifest)), Catch::Contains("index.html"));
  // A new file needs nothing; no temporary file is left behind.
  write_output_file(dir.file("new.csv"), "a,b\n", "report file");
  int temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir.str()))
    temporaries += e.path().filename().string().find(".tmp-") != std::string::npos;
  CHECK(temporaries == 0);
  CHECK_THROWS_WITH(write_output_file(dir.str(), "x", "report file", force),
                    Catch::Contains("it is a folder"));
}

TEST_CASE("output files: a symbolic link is never written through", "[model][files]") {
  test::TempDir dir;
  const std::string target = dir.file("precious.txt");
  put(target, "keep me");
  const std::string link = dir.file("metrics.csv");
  fs::create_symlink(target, link);
  // Even a name in the manifest: the link was planted after tiersim wrote there.
  put(dir.file(kOutputManifest), "metrics.csv\n");
  CHECK_THROWS_WITH(write_output_file(link, "a,b\n", "report file"),
                    Catch::Contains("symbolic link"));
  CHECK(test::slurp(target) == "keep me");
  OutputOptions force;
  force.force = true;
  write_output_file(link, "a,b\n", "report file", force);
  CHECK(test::slurp(target) == "keep me");  // the link was replaced, its target untouched
  CHECK_FALSE(fs::is_symlink(link));
  CHECK(test::slurp(link) == "a,b\n");
}

TEST_CASE("output files: a write that fails (a full disk) leaves the previous file whole",
          "[model][files]") {
  test::TempDir dir;
  const std::string path = dir.file("index.html");
  write_output_file(path, "the previous good page", "report file");
  // The child's files may not grow past 64 bytes: each write beyond fails with EFBIG, as on a
  // full disk (ENOSPC) a write fails part-way.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit small{64, 64};
    if (::setrlimit(RLIMIT_FSIZE, &small) != 0) std::_Exit(3);
    try {
      write_output_file(path, std::string(4096, 'n'), "report file");
      std::_Exit(1);  // no error
    } catch (const IoError&) {
      std::_Exit(0);
    } catch (...) {
      std::_Exit(2);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(test::slurp(path) == "the previous good page");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.str())) files += e.is_regular_file();
  CHECK(files == 2);  // the page and the manifest: no temporary file left
}

}  // namespace tiersim
