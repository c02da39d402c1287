// Sensitivity (tornado) and break-even: properties checked against fresh simulations, no
// expected numbers written down.
#include <catch2/catch.hpp>

#include <cmath>

#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "study/sensitivity.hpp"

namespace study_sensitivity_test {

using namespace tiersim;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

// OPT-30B streamed from host DRAM to one L40S: uses a GPU, DRAM and the platform, no drive.
const char* kDram =
    "name: dram\n"
    "hardware:\n"
    "  gpu: {model: L40S, count: 1}\n"
    "  host: {model: generic-2s-ddr5, dram_gb: 512}\n"
    "model: {name: opt-30b}\n"
    "workload: {kind: inference, batch: 32, prompt_tokens: 512, gen_tokens: 8}\n"
    "policy: {weights: cpu, kv_cache: gpu}\n";

config::VariantSpec inline_variant(const std::string& name, const std::string& yaml,
                                   std::vector<config::Override> sets = {}) {
  config::VariantSpec v;
  v.name = name;
  v.inline_yaml = yaml;
  v.display = name;
  v.sets = std::move(sets);
  return v;
}

config::LoadOptions data(std::vector<std::string> sets = {}) {
  config::LoadOptions o;
  o.data_dir = kData;
  o.overrides = std::move(sets);
  return o;
}

double metric_of(const config::VariantSpec& v, std::vector<std::string> sets,
                 const std::string& name) {
  const Scenario s = config::load_variant(v, data(std::move(sets)));
  return sim::simulate(s).get(name);
}

const sensitivity::Swing& row(const sensitivity::Tornado& t, const std::string& key) {
  for (const auto& r : t.rows)
    if (r.input.key == key) return r;
  FAIL("no row for " + key);
  throw;
}

}  // namespace

TEST_CASE("the tornado varies used inputs, skips unused ones and sorts by swing",
          "[study][sensitivity]") {
  sensitivity::Options o;
  o.load = data();
  const auto v = inline_variant("dram", kDram);
  const sensitivity::Tornado t = sensitivity::run_tornado(v, o, 1);
  REQUIRE(t.error.empty());
  CHECK(t.base_metric == Approx(metric_of(v, {}, "usd_per_million_tokens")));

  const auto& gpu = row(t, "economics.prices.gpu_usd");
  REQUIRE(gpu.skipped.empty());
  CHECK(gpu.low_value == Approx(0.8 * gpu.base_value));
  CHECK(gpu.high_value == Approx(1.2 * gpu.base_value));
  REQUIRE(gpu.metric_low);
  REQUIRE(gpu.metric_high);
  // A dearer GPU costs more per token; the same value through --set gives the same metric.
  CHECK(*gpu.metric_high > t.base_metric);
  CHECK(*gpu.metric_low < t.base_metric);
  CHECK(*gpu.metric_high ==
        Approx(metric_of(
            v, {sensitivity::override_text("economics.prices.gpu_usd", gpu.high_value, false)},
            "usd_per_million_tokens")));

  CHECK_FALSE(row(t, "economics.prices.drive_usd").skipped.empty());  // no drive
  CHECK_FALSE(row(t, "hardware.nvme.read_gbps").skipped.empty());
  const auto& duty = row(t, "economics.duty_cycle");  // 1 by default: cannot grow
  CHECK(duty.clamped);
  CHECK(duty.high_value == 1);

  bool seen_skipped = false;
  double last = INFINITY;
  for (const auto& r : t.rows) {
    if (!r.skipped.empty()) {
      seen_skipped = true;
      continue;
    }
    CHECK_FALSE(seen_skipped);  // varied rows first
    CHECK(r.swing() <= last);
    last = r.swing();
  }
}

TEST_CASE("a sensitivity input is a numeric scenario key and the metric a declared one",
          "[study][sensitivity]") {
  CHECK(sensitivity::parse_input("economics.usd_per_kwh=0.5:2", 0.2, "--input").high_factor == 2);
  CHECK_THROWS_WITH(sensitivity::parse_input("economics.usd_per_kwhh", 0.2, "--input"),
                    Catch::Contains("did you mean 'economics.usd_per_kwh'?"));
  CHECK_THROWS_WITH(sensitivity::parse_input("policy.weights", 0.2, "--input"),
                    Catch::Contains("not a numeric scenario key"));
  CHECK_THROWS_AS(sensitivity::parse_input("economics.pue=2:1", 0.2, "--input"), ConfigError);
  // An infinite factor passed LOW <= HIGH and varied the input to infinity.
  CHECK_THROWS_WITH(sensitivity::parse_input("economics.pue=inf:inf", 0.2, "--input"),
                    Catch::Contains("both finite"));
  CHECK_THROWS_WITH(sensitivity::parse_input("economics.pue=1:inf", 0.2, "--input"),
                    Catch::Contains("both finite"));
  CHECK_NOTHROW(sensitivity::check_metric_name("throughput_tokens_per_s", "--metric"));
  CHECK_THROWS_WITH(sensitivity::check_metric_name("usd_per_milion_tokens", "--metric"),
                    Catch::Contains("did you mean 'usd_per_million_tokens'?"));
}

TEST_CASE("break-even finds the value where two configurations tie, and says when none does",
          "[study][sensitivity]") {
  // Weights on a drive with a cheap server against weights in DRAM with a dear one: a free drive
  // leaves the first far cheaper, a $10M drive the second, so a drive price in between ties them.
  // The second has no drive: the key is held fixed there.
  auto node = [](const std::string& key, const std::string& yaml) {
    return config::Override{
        key, config::YNode(YAML::Load(yaml), std::make_shared<const std::string>("t"), key)};
  };
  const auto nvme = inline_variant(
      "nvme", kDram,
      {node("hardware.nvme", "{model: micron-9550, count: 1}"), node("policy.weights", "nvme"),
       node("economics.prices.platform_usd", "20000")});
  const auto dram =
      inline_variant("dram", kDram, {node("economics.prices.platform_usd", "200000")});
  sensitivity::BreakEvenOptions o;
  o.load = data();
  o.key = "economics.prices.drive_usd";
  o.low = 0;
  o.high = 1e7;
  const sensitivity::BreakEven be = sensitivity::break_even(nvme, dram, o);
  CHECK(be.a_uses_key);
  CHECK_FALSE(be.b_uses_key);
  REQUIRE(be.scan.size() == 9);
  const auto& lo = be.scan.front();
  const auto& hi = be.scan.back();
  REQUIRE((lo.metric_a && lo.metric_b && hi.metric_a && hi.metric_b));
  REQUIRE(*lo.metric_a < *lo.metric_b);  // the premise of the case
  REQUIRE(*hi.metric_a > *hi.metric_b);
  REQUIRE(be.tie);
  CHECK(be.crossings == 1);
  CHECK(*be.tie > be.low);
  CHECK(*be.tie < be.high);
  const std::string set = sensitivity::override_text(o.key, *be.tie, false);
  CHECK(metric_of(nvme, {set}, o.metric) == Approx(metric_of(dram, {}, o.metric)).epsilon(1e-4));

  const auto one = inline_variant("one", kDram);
  // The electricity price cannot close a platform price gap between otherwise equal set-ups.
  const auto dear = inline_variant("dear", kDram, {node("economics.prices.platform_usd", "90000")});
  o.key = "economics.usd_per_kwh";
  o.low = 0.01;
  o.high = 1;
  const sensitivity::BreakEven none = sensitivity::break_even(one, dear, o);
  CHECK_FALSE(none.tie);
  CHECK(none.crossings == 0);
  for (const auto& s : none.scan) CHECK(*s.metric_a < *s.metric_b);
  CHECK_FALSE(none.equal_everywhere);

  // Two equal configurations are equal at every value: no break-even value, where the scan's
  // first sample alone used to be taken for one.
  const auto twin = inline_variant("twin", kDram);
  const sensitivity::BreakEven same = sensitivity::break_even(one, twin, o);
  CHECK(same.equal_everywhere);
  CHECK_FALSE(same.tie);
  CHECK(same.crossings == 0);

  o.key = "hardware.nvme.read_gbps";  // neither has a drive
  CHECK_THROWS_AS(sensitivity::break_even(one, dear, o), ConfigError);
}

TEST_CASE("break-even searches only where both configurations run and draws no line across "
          "the rest",
          "[study][sensitivity]") {
  // The same box, one with a dearer server: the dearer one costs more per token at every batch,
  // by less as the batch grows (the capex is spread over more tokens), so the straight line
  // through the ends crosses zero above the range. Above some batch the KV cache no longer fits
  // the GPU: the range is narrowed to the batches that fit, and the line is not drawn across
  // the batches that do not.
  auto node = [](const std::string& key, const std::string& yaml) {
    return config::Override{
        key, config::YNode(YAML::Load(yaml), std::make_shared<const std::string>("t"), key)};
  };
  const auto cheap = inline_variant("cheap", kDram);
  const auto dear = inline_variant("dear", kDram, {node("economics.prices.platform_usd", "90000")});
  sensitivity::BreakEvenOptions o;
  o.load = data();
  o.key = "workload.batch";
  o.low = 1;
  o.high = 4096;
  const sensitivity::BreakEven be = sensitivity::break_even(cheap, dear, o);
  REQUIRE_FALSE(be.failed.empty());  // the premise: the top of the range does not fit
  REQUIRE(be.runs_low);
  REQUIRE(be.runs_high);
  CHECK(*be.runs_low == 1);
  CHECK(*be.runs_high < 4096);
  CHECK(be.stops_low.empty());
  CHECK(be.stops_high.find("does not fit") != std::string::npos);
  // The end is the largest batch that fits: one more does not.
  const Scenario at = config::load_variant(
      cheap, data({sensitivity::override_text(o.key, *be.runs_high, true)}));
  CHECK(sim::simulate(at).fits);
  const Scenario past = config::load_variant(
      cheap, data({sensitivity::override_text(o.key, *be.runs_high + 1, true)}));
  CHECK_FALSE(sim::simulate(past).fits);
  // Every sample searched ran, within the part where both run.
  REQUIRE(be.scan.size() == 9);
  for (const auto& s : be.scan) {
    CHECK(s.metric_a);
    CHECK(s.metric_b);
    CHECK(s.value >= *be.runs_low);
    CHECK(s.value <= *be.runs_high);
    CHECK(*s.metric_a < *s.metric_b);
  }
  CHECK_FALSE(be.tie);
  CHECK_FALSE(be.extrapolated_tie);
  CHECK(be.extrapolation_blocked == be.stops_high);
}

TEST_CASE("break-even moves a rejected whole number to an accepted one, and a rejected value "
          "does not end the part where both fit",
          "[study][sensitivity]") {
  // Two data-parallel ranks: an odd batch is rejected (each rank runs batch / 2 sequences), a
  // large one does not fit. The scan shows only batches that ran, and the part searched ends at
  // the largest even batch that fits, not at the first odd one.
  const char* kRanks =
      "name: ranks\n"
      "hardware:\n"
      "  gpu: {model: L40S, count: 2}\n"
      "  host: {model: generic-2s-ddr5, dram_gb: 256}\n"
      "model: {name: opt-6.7b}\n"
      "workload: {kind: inference, batch: 8, prompt_tokens: 128, gen_tokens: 4}\n"
      "policy: {weights: gpu, kv_cache: gpu, parallelism: {data: 2}}\n";
  auto node = [](const std::string& key, const std::string& yaml) {
    return config::Override{
        key, config::YNode(YAML::Load(yaml), std::make_shared<const std::string>("t"), key)};
  };
  const auto cheap = inline_variant("cheap", kRanks);
  const auto dear =
      inline_variant("dear", kRanks, {node("economics.prices.platform_usd", "90000")});
  REQUIRE_THROWS_AS(config::load_variant(cheap, data({"workload.batch=7"})), ConfigError);
  sensitivity::BreakEvenOptions o;
  o.load = data();
  o.key = "workload.batch";
  o.low = 1;
  o.high = 4096;
  const sensitivity::BreakEven be = sensitivity::break_even(cheap, dear, o);
  REQUIRE(be.runs_high);
  for (const auto& s : be.scan) {
    CHECK(s.metric_a);
    CHECK(s.metric_b);
  }
  for (const auto& f : be.failed) CHECK(f.no_fit);
  const double top = *be.runs_high;
  CHECK(std::fmod(top, 2) == 0);
  CHECK(sim::simulate(config::load_variant(
                          cheap, data({sensitivity::override_text(o.key, top, true)})))
            .fits);
  CHECK_FALSE(sim::simulate(config::load_variant(
                                cheap, data({sensitivity::override_text(o.key, top + 2, true)})))
                  .fits);
}
}  // namespace study_sensitivity_test
