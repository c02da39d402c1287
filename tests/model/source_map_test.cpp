#include "model/source_map.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

namespace model_source_map_test {

using namespace tiersim;

TEST_CASE("a copied source map reads as the original until one of them is written",
          "[model][sources]") {
  SourceMap catalog{{"memory_mib", "datasheet"}, {"tdp_w", "estimate: board power"}};
  SourceMap scenario = catalog;
  // The copy shares the texts: the same map object behind both.
  CHECK(&scenario.map() == &catalog.map());
  CHECK(scenario == catalog);
  CHECK(scenario.at("memory_mib") == "datasheet");

  // A write gives the writer its own map; the other keeps what it had.
  scenario["memory_mib"] = "override";
  CHECK(&scenario.map() != &catalog.map());
  CHECK(scenario.at("memory_mib") == "override");
  CHECK(catalog.at("memory_mib") == "datasheet");
  CHECK_FALSE(scenario == catalog);

  // edit() writes the same way.
  SourceMap other = catalog;
  other.edit().insert_or_assign("arch", "whitepaper");
  CHECK(other.count("arch") == 1);
  CHECK(catalog.count("arch") == 0);
  SourceMap third = catalog;
  for (auto& [field, text] : third.edit()) text = "x " + text;
  CHECK(third.at("tdp_w") == "x estimate: board power");
  CHECK(catalog.at("tdp_w") == "estimate: board power");

  // A map nobody else holds is written in place.
  const auto* before = &third.map();
  third["new"] = "y";
  CHECK(&third.map() == before);
}

TEST_CASE("an empty source map reads as empty and can be written", "[model][sources]") {
  SourceMap empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(empty.find("x") == empty.end());
  CHECK(empty.begin() == empty.end());
  SourceMap copy = empty;
  copy["x"] = "y";
  CHECK(empty.empty());
  CHECK(copy.size() == 1);
}

TEST_CASE("threads that copy one shared source map and write their copies do not disturb it",
          "[model][sources]") {
  // As the plan's loads do: every thread copies the catalog's entry and overrides a field.
  const SourceMap catalog{{"dram_gb", "catalog"}, {"sockets", "datasheet"}};
  std::vector<std::thread> threads;
  std::vector<std::string> seen(4);
  for (std::size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        SourceMap mine = catalog;
        mine["dram_gb"] = "override " + std::to_string(t);
        seen[t] = mine.at("dram_gb") + " / " + mine.at("sockets");
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t t = 0; t < seen.size(); ++t)
    CHECK(seen[t] == "override " + std::to_string(t) + " / datasheet");
  CHECK(catalog.at("dram_gb") == "catalog");
}

}  // namespace model_source_map_test
