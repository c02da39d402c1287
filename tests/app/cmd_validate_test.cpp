// `tiersim validate --write-accuracy`: the file `tiersim run` quotes, written as the shipped one
// is, and never over a file tiersim did not write.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace app_cmd_validate_test {

TEST_CASE("validate --write-accuracy writes the record run quotes", "[app][validate][every-scenario]") {
  using tiersim::test::shell;
  using tiersim::test::slurp;
  tiersim::test::TempDir dir;
  const std::string bin = tiersim::test::tiersim_bin();
  REQUIRE_FALSE(bin.empty());
  const std::string cd = "cd '" + std::string(TIERSIM_SOURCE_DIR) + "' && '" + bin + "' ";
  const std::string out = dir.file("accuracy.json");
  REQUIRE(shell(cd + "validate --write-accuracy '" + out + "' > /dev/null 2>&1") == 0);
  // The same text as the shipped file (which a test keeps up to date with validate).
  CHECK(slurp(out) ==
        slurp(std::string(TIERSIM_SOURCE_DIR) + "/scenarios/validation/accuracy.json"));
  // A file tiersim did not write is refused before the validation runs, and left as it was.
  const std::string mine = dir.file("mine.yaml");
  std::ofstream(mine) << "my notes\n";
  CHECK(shell(cd + "validate --write-accuracy '" + mine + "' > /dev/null 2>&1") != 0);
  CHECK(slurp(mine) == "my notes\n");
}

}  // namespace app_cmd_validate_test
