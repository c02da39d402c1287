#include <catch2/catch.hpp>
#include <string>

#include "sim/engine/engine.hpp"
#include "sim/engine/kinds.hpp"

namespace sim_engine_kinds_test {

using namespace tiersim::sim;

TEST_CASE("a resource keeps the role and the name the workload gave it", "[engine]") {
  Engine e;
  Resource& drive = e.add_resource({ResourceRole::kNvme, "scratch-array"}, WorkUnit::kSeconds, 1.0);
  Resource& link = e.add_resource({ResourceRole::kPcieD2h, "to-host3"}, WorkUnit::kBytes, 1e9, 2);
  CHECK(drive.role() == ResourceRole::kNvme);
  CHECK(drive.name() == "scratch-array");
  CHECK(link.role() == ResourceRole::kPcieD2h);
  CHECK(link.name() == "to-host3");
  CHECK(link.channels() == 2);
  REQUIRE(e.resources().size() == 2);
  CHECK(e.resources()[1]->name() == "to-host3");
}

TEST_CASE("every role has a distinct name", "[engine]") {
  for (std::size_t i = 0; i < kResourceRoleCount; ++i)
    for (std::size_t j = i + 1; j < kResourceRoleCount; ++j)
      CHECK(std::string(to_string(static_cast<ResourceRole>(i))) !=
            to_string(static_cast<ResourceRole>(j)));
  CHECK(std::string(to_string(ResourceRole::kNvme)) == "nvme");
  CHECK(std::string(to_string(ResourceRole::kOther)) == "other");
}

TEST_CASE("activities are equal when their names are", "[engine]") {
  constexpr Activity a{"copy"};
  const std::string text = "copy";
  CHECK(a == Activity{text.c_str()});  // another pointer, the same name
  CHECK_FALSE(a == Activity{"copy-back"});
  CHECK(Activity{} == Activity{""});  // untagged work
  CHECK(std::string(to_string(a)) == "copy");
}

namespace {

Task traced(Resource& r, Activity a) {
  co_await r.use(1.0, Tag{a, 2, 3});
}

}  // namespace

TEST_CASE("a trace span carries the activity the work was tagged with", "[engine]") {
  Engine e;
  e.enable_trace(true);
  Resource& gpu = e.add_resource({ResourceRole::kGpu, "gpu"}, WorkUnit::kSeconds, 1.0);
  e.spawn(traced(gpu, Activity{"decode-step"}));
  e.run();
  REQUIRE(e.trace().size() == 1);
  CHECK(e.trace()[0].activity == Activity{"decode-step"});
  CHECK(e.trace()[0].phase == 2);
  CHECK(e.trace()[0].item == 3);
}
}  // namespace sim_engine_kinds_test
