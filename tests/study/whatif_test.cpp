// "What would it take": cases whose answer is known by construction (a price that enters the
// capex linearly, so the ratio of return per dollar is a closed-form function of it), checked
// against fresh simulations; no expected numbers written down.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>

#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "study/whatif.hpp"

namespace study_whatif_test {

using namespace tiersim;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

// OPT-6.7B streamed from host DRAM to one L40S: fits with room, simulates in milliseconds.
const char* kBox =
    "name: box\n"
    "hardware:\n"
    "  gpu: {model: L40S, count: 1}\n"
    "  host: {model: generic-2s-ddr5, dram_gb: 256}\n"
    "model: {name: opt-6.7b}\n"
    "workload: {kind: inference, batch: 8, prompt_tokens: 128, gen_tokens: 4}\n"
    "policy: {weights: cpu, kv_cache: gpu}\n";

config::VariantSpec variant(const std::string& name, std::vector<config::Override> sets = {}) {
  config::VariantSpec v;
  v.name = name;
  v.inline_yaml = kBox;
  v.display = name;
  v.sets = std::move(sets);
  return v;
}

whatif::Options options(double ratio, std::vector<whatif::Input> inputs) {
  whatif::Options o;
  o.load.data_dir = kData;
  o.ratio = ratio;
  o.inputs = std::move(inputs);
  o.threads = 1;
  return o;
}

sim::RunResult run(const config::VariantSpec& v, std::vector<std::string> sets = {}) {
  config::LoadOptions o;
  o.data_dir = kData;
  o.overrides = std::move(sets);
  return sim::simulate(config::load_variant(v, o));
}

whatif::Input input(const std::string& key, whatif::Scope scope, double lo, double hi) {
  whatif::Input in;
  in.key = key;
  in.scope = scope;
  in.low_factor = lo;
  in.high_factor = hi;
  return in;
}

}  // namespace

TEST_CASE("whatif finds the price at which one configuration beats another by a ratio",
          "[study][whatif]") {
  // A and B are the same box; B's platform price moves. Same throughput, so A's return per dollar
  // over B's is capex_B / capex_A, and capex_B = capex_A + platform_B (f - 1): the factor that
  // gives ratio R is f* = 1 + (R - 1) capex_A / platform.
  const auto a = variant("a"), b = variant("b");
  const sim::RunResult base = run(a);
  const double capex = base.get("capex_usd"), platform = base.get("capex_usd_platform");
  REQUIRE(platform > 0);
  const double ratio = 1.5;
  const double f_star = 1 + (ratio - 1) * capex / platform;
  REQUIRE(f_star < 8);  // the premise: inside the range searched
  const whatif::Result r = whatif::solve(
      a, b, options(ratio, {input("economics.prices.platform_usd", whatif::Scope::kB, 0.5, 8)}));
  REQUIRE(r.as_given.ratio);
  CHECK(*r.as_given.ratio == Approx(1.0));
  REQUIRE(r.found);
  REQUIRE(r.inputs.size() == 1);
  CHECK(r.nearest.meets);
  CHECK(*r.nearest.ratio >= ratio);
  // Bisection to 2^-10 of a scan interval of a 16x range: within 0.1 % of f*.
  CHECK(r.nearest.factors[0] == Approx(f_star).epsilon(1e-3));
  CHECK(r.inputs[0].alone);
  CHECK(*r.inputs[0].alone == Approx(f_star).epsilon(1e-3));
  CHECK(r.inputs[0].trend == "rises");
  CHECK(r.nearest.distance == Approx(std::log(f_star) / std::log(16.0)).epsilon(1e-3));
  // The settings reproduce the point: B at that platform price, A as given.
  const auto sb = whatif::point_settings(r, r.nearest, false);
  REQUIRE(sb.size() == 1);
  CHECK(whatif::point_settings(r, r.nearest, true).empty());
  const double rpd_b = run(b, sb).get("return_per_dollar");
  CHECK(base.get("return_per_dollar") / rpd_b == Approx(*r.nearest.ratio));
  CHECK(r.points <= 3000);
}

TEST_CASE("whatif finds the nearest point over two inputs that trade off", "[study][whatif]") {
  // B's platform price up (f_p) and A's GPU price down (f_g): ratio = (capex + platform (f_p - 1))
  // / (capex + gpu (f_g - 1)). The nearest point on ratio = R in the normalised log space is
  // found here by brute force over a fine grid of the closed form and compared.
  const auto a = variant("a"), b = variant("b");
  const sim::RunResult base = run(a);
  const double capex = base.get("capex_usd"), platform = base.get("capex_usd_platform"),
               gpu = base.get("capex_usd_gpu");
  REQUIRE(gpu > 0);
  const double ratio = 1.6, lo = 0.25, hi = 4, w = std::log(hi / lo);
  auto closed = [&](double fp, double fg) {
    return (capex + platform * (fp - 1)) / (capex + gpu * (fg - 1));
  };
  double best = INFINITY;
  const int n = 2000;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) {
      const double up = double(i) / n, ug = double(j) / n;
      const double fp = lo * std::exp(up * w), fg = lo * std::exp(ug * w);
      if (closed(fp, fg) < ratio) continue;
      const double u0 = std::log(1 / lo) / w;
      best = std::min(best, std::hypot(up - u0, ug - u0));
    }
  REQUIRE(std::isfinite(best));
  const whatif::Result r =
      whatif::solve(a, b,
                    options(ratio, {input("economics.prices.platform_usd", whatif::Scope::kB, lo, hi),
                                    input("economics.prices.gpu_usd", whatif::Scope::kA, lo, hi)}));
  REQUIRE(r.found);
  CHECK(closed(r.nearest.factors[0], r.nearest.factors[1]) == Approx(*r.nearest.ratio).epsilon(1e-6));
  CHECK(*r.nearest.ratio >= ratio);
  // Within a grid step (1/2000) and the bisection's tolerance of the true nearest distance.
  CHECK(r.nearest.distance == Approx(best).margin(3e-3));
  // Both inputs move: the nearest point is not one input alone.
  CHECK(r.nearest.factors[0] > 1.01);
  CHECK(r.nearest.factors[1] < 0.99);
  for (const auto& in : r.inputs)
    if (in.alone) CHECK(r.nearest.distance <= std::fabs(std::log(*in.alone)) / w + 1e-9);
}

TEST_CASE("whatif says when no point in the ranges reaches the ratio", "[study][whatif]") {
  const auto a = variant("a"), b = variant("b");
  const sim::RunResult base = run(a);
  const double capex = base.get("capex_usd"), platform = base.get("capex_usd_platform");
  // B's platform price at most doubled: the ratio cannot pass (capex + platform) / capex, reached
  // at the upper end. The electricity price does not enter the return per dollar (capex only).
  const double ratio = 2 * (capex + platform) / capex;
  const whatif::Result r = whatif::solve(
      a, b,
      options(ratio, {input("economics.prices.platform_usd", whatif::Scope::kB, 0.5, 2),
                      input("economics.usd_per_kwh", whatif::Scope::kBoth, 0.25, 4)}));
  CHECK_FALSE(r.found);
  REQUIRE(r.best.ratio);
  CHECK(*r.best.ratio == Approx((capex + platform) / capex).epsilon(1e-9));
  CHECK(r.best.factors[0] == Approx(2));
  REQUIRE_FALSE(r.at_bound.empty());
  CHECK(r.at_bound.front() == "b:economics.prices.platform_usd");
  CHECK(r.best_single_checked);
  CHECK(r.inputs[1].trend == "flat");
  CHECK_FALSE(r.budget_reached);
  CHECK(whatif::to_json(r)["found"] == false);
}

TEST_CASE("whatif counts only points where both configurations fit", "[study][whatif]") {
  // A's batch grows its throughput per dollar, but past some batch its KV cache no longer fits
  // the GPU. The target is out of reach of batches that fit: the answer is the best fitting one,
  // and the scan reports the part of the range where both fit.
  const auto a = variant("a"), b = variant("b");
  const whatif::Result r = whatif::solve(
      a, b, options(1000, {input("workload.batch", whatif::Scope::kA, 1.0 / 8, 4096)}));
  CHECK_FALSE(r.found);
  const auto& in = r.inputs.at(0);
  REQUIRE(in.fits_high);
  CHECK(*in.fits_high < 4096);  // the premise: the top of the range does not fit
  REQUIRE(r.best.ratio);
  CHECK(r.best.metric_a);
  const auto sa = whatif::point_settings(r, r.best, true);
  REQUIRE(sa.size() == 1);
  CHECK(run(a, sa).fits);
  // Points that do not fit carry why.
  bool saw_error = false;
  for (const auto& s : in.scan)
    if (!s.ratio) saw_error = saw_error || s.error.find("does not fit") != std::string::npos;
  CHECK(saw_error);
}

TEST_CASE("whatif inputs are numeric keys with ranges that hold the value as given",
          "[study][whatif]") {
  CHECK(whatif::parse_input("economics.usd_per_kwh=0.5:2", whatif::Scope::kBoth, "--vary")
            .high_factor == 2);
  CHECK(whatif::parse_input("workload.batch", whatif::Scope::kA, "--vary-a").low_factor == 0.25);
  CHECK(whatif::input_label(whatif::parse_input("workload.batch", whatif::Scope::kB, "--vary-b")) ==
        "b:workload.batch");
  CHECK_THROWS_WITH(whatif::parse_input("economics.usd_per_kwhh", whatif::Scope::kBoth, "--vary"),
                    Catch::Contains("did you mean 'economics.usd_per_kwh'?"));
  CHECK_THROWS_WITH(whatif::parse_input("policy.weights", whatif::Scope::kBoth, "--vary"),
                    Catch::Contains("not a numeric scenario key"));
  CHECK_THROWS_WITH(whatif::parse_input("economics.pue=2:4", whatif::Scope::kBoth, "--vary"),
                    Catch::Contains("LOW <= 1 <= HIGH"));
  CHECK_THROWS_AS(whatif::parse_input("economics.pue=0.5", whatif::Scope::kBoth, "--vary"),
                  ConfigError);
  const auto a = variant("a"), b = variant("b");
  // A drive price where neither has a drive: nothing to vary.
  CHECK_THROWS_AS(whatif::solve(a, b, options(2, {input("economics.prices.drive_usd",
                                                        whatif::Scope::kBoth, 0.5, 2)})),
                  ConfigError);
  CHECK_THROWS_AS(whatif::solve(a, b, options(0, {})), ConfigError);
}

TEST_CASE("whatif stops at its point limit and when asked to", "[study][whatif]") {
  const auto a = variant("a"), b = variant("b");
  auto o = options(1000, {input("economics.prices.platform_usd", whatif::Scope::kB, 0.5, 8),
                          input("workload.batch", whatif::Scope::kA, 0.5, 4)});
  o.max_points = 10;
  const whatif::Result r = whatif::solve(a, b, o);
  CHECK(r.budget_reached);
  CHECK(r.points == 10);
  std::atomic<bool> stop{true};
  o.max_points = 3000;
  o.stop = &stop;
  const whatif::Result s = whatif::solve(a, b, o);
  CHECK(s.interrupted);
  CHECK(s.points <= 1);
}

TEST_CASE("whatif tries each value of a choice input, a changed choice counting 1",
          "[study][whatif]") {
  // B's software stack alone: the ratio each stack gives comes from direct simulations, so the
  // stack that gives the highest is the answer for that ratio as the target, at distance 1 (0
  // when it is the stack as given).
  const auto a = variant("a"), b = variant("b");
  const double rpd_a = run(a).get("return_per_dollar");
  const whatif::Input stack =
      whatif::parse_input("policy.stack", whatif::Scope::kB, "--vary-b");
  REQUIRE(stack.choices.size() >= 2);
  std::string best_stack;
  double best = 0;
  for (const auto& v : stack.choices) {
    const double ratio = rpd_a / run(b, {"policy.stack=" + v}).get("return_per_dollar");
    if (ratio > best) best = ratio, best_stack = v;
  }
  const whatif::Result r = whatif::solve(a, b, options(best, {stack}));
  REQUIRE(r.found);
  CHECK(*r.nearest.ratio == Approx(best));
  CHECK(r.choice_outcomes.size() == stack.choices.size());
  const std::string given = r.inputs.at(0).text_b;
  if (best_stack == given) {
    CHECK(r.nearest.distance == 0);
  } else {
    CHECK(r.nearest.distance == Approx(1));
    CHECK(r.nearest.choices.at(0) == best_stack);
    CHECK(whatif::point_settings(r, r.nearest, false) ==
          std::vector<std::string>{"policy.stack=" + best_stack});
  }
  CHECK(whatif::parse_input("policy.stack=optimized", whatif::Scope::kB, "--vary-b").choices ==
        std::vector<std::string>{"optimized"});
  CHECK_THROWS_WITH(whatif::parse_input("policy.stack=optimised", whatif::Scope::kB, "--vary-b"),
                    Catch::Contains("did you mean 'optimized'?"));
}
}  // namespace study_whatif_test
