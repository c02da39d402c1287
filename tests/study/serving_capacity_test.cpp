// The serving capacity search against queues whose capacity is known in closed form.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "study/serving_capacity.hpp"
#include "tests/support.hpp"

namespace tiersim::study_serving_capacity_test {
namespace {

// One server, one request at a time, every request the same: a prefill of 256 tokens giving the
// one output token. The service time S is a constant the simulator computes; the queue is a
// single-server FCFS queue with deterministic service.
const char* kSingleServerYaml = R"(
name: capacity-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload:
  kind: serving
  scheduler: static
  max_batch: 1
  arrival_rate: 1
  requests: 3000
  prompt_tokens: 256
  output_tokens: 1
)";

double service_time_s(const Scenario& s) {
  Scenario one = s;
  one.serving.requests = 1;
  return sim::simulate(one).get("e2e_mean_s");
}

capacity::ServingCapacity search(const Scenario& base, capacity::SearchOptions o = {}) {
  return capacity::search_serving_capacity(
      base, [&](double rate) { return capacity::with_rate(base, rate); }, o);
}

// M/D/1 waiting-time distribution in units of the service time (Erlang 1909; Gross and Harris,
// "Fundamentals of Queueing Theory", M/D/1 section): for t >= 0,
//   P(W <= t) = (1 - rho) sum_{k=0}^{floor t} (rho (k - t))^k / k! e^{-rho (k - t)}.
double md1_wait_cdf(double rho, double t) {
  double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t)); ++k)
    sum += std::pow(rho * (k - t), k) / std::tgamma(k + 1) * std::exp(-rho * (k - t));
  return (1 - rho) * sum;
}

}  // namespace

TEST_CASE("capacity of evenly spaced arrivals at deterministic service is 1 / S",
          "[study][capacity]") {
  // D/D/1: below 1/S no request ever waits; above it the backlog grows with every arrival, so the
  // queue's drift flags it. No SLO: the stability test alone decides.
  Scenario s = test::load_yaml(kSingleServerYaml, {"workload.arrival_cv=0"});
  const double service_s = service_time_s(s);
  REQUIRE(service_s > 0);
  capacity::SearchOptions o;
  o.tolerance = 0.005;
  o.start_rate_per_s = 0.3 / service_s;  // not a power of two away from the answer
  const auto c = search(s, o);
  REQUIRE(c.found);
  REQUIRE_FALSE(c.unbounded);
  const double mu = 1 / service_s;
  INFO("service " << service_s << " s, capacity " << c.rate_per_s << ", fails at "
                  << c.failing_rate_per_s << ", limit " << c.limit);
  CHECK(c.rate_per_s <= mu * (1 + 1e-9));
  CHECK(c.failing_rate_per_s >= mu * (1 - 1e-9));
  CHECK(c.failing_rate_per_s - c.rate_per_s <= o.tolerance * c.rate_per_s);
  CHECK_THAT(c.limit, Catch::Contains("queue not stable"));
  // The bracket was found by doubling from the start rate, then bisected.
  CHECK(c.points[0].rate_per_s == o.start_rate_per_s);
  CHECK(c.points[1].rate_per_s == 2 * o.start_rate_per_s);
  CHECK(c.at_capacity()->result.get("queue_delay_mean_s") == 0);
}

TEST_CASE("a traffic level gives the whole servers that carry it and a request's cost on them",
          "[study][capacity]") {
  // Two GPUs per server (tensor parallel 2). Capacity C: traffic 2.5 C needs 3 servers, 6 GPUs;
  // a request costs 3 servers' hourly cost over the traffic, more than at capacity on one server
  // (the third server is half idle).
  Scenario s = test::load_yaml(kSingleServerYaml, {"workload.arrival_cv=0", "hardware.gpu.count=2",
                                                   "policy.parallelism.tensor=2"});
  capacity::SearchOptions o;
  o.tolerance = 0.01;
  const auto plain = search(s, o);
  REQUIRE(plain.found);
  CHECK_FALSE(plain.at_capacity()->result.has("servers_for_traffic"));
  o.traffic_requests_per_s = 2.5 * plain.rate_per_s;
  const auto c = search(s, o);
  REQUIRE(c.found);
  CHECK(c.rate_per_s == plain.rate_per_s);
  const sim::RunResult& r = c.at_capacity()->result;
  CHECK(r.get("servers_for_traffic") == 3);
  CHECK(r.get("gpus_for_traffic") == 6);
  CHECK(r.get("usd_per_request_for_traffic") ==
        Approx(3 * r.get("usd_per_hour") / (o.traffic_requests_per_s * 3600)));
  CHECK(r.get("usd_per_request_for_traffic") > r.get("usd_per_request_at_capacity"));
  // Exactly the capacity: one server.
  o.traffic_requests_per_s = plain.rate_per_s;
  CHECK(search(s, o).at_capacity()->result.get("servers_for_traffic") == 1);
}

TEST_CASE("capacity of Poisson arrivals within a TTFT target matches the M/D/1 waiting time",
          "[study][capacity]") {
  // TTFT = wait + S. With a target of 3 S met by 90% of requests, the capacity is the rho at
  // which P(W <= 2 S) = 0.9 in the M/D/1 queue.
  Scenario s = test::load_yaml(kSingleServerYaml, {"workload.requests=20000"});
  const double service_s = service_time_s(s);
  s.serving.slo_ttft_s = 3 * service_s;
  double lo = 0.01, hi = 0.99;  // md1_wait_cdf falls with rho
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (md1_wait_cdf(mid, 2.0) >= 0.9 ? lo : hi) = mid;
  }
  const double theory_per_s = lo / service_s;
  capacity::SearchOptions o;
  o.tolerance = 0.005;
  const auto c = search(s, o);
  REQUIRE(c.found);
  INFO("rho* " << lo << ", capacity " << c.rate_per_s * service_s << " x 1/S, limit " << c.limit);
  CHECK(c.rate_per_s == Approx(theory_per_s).epsilon(0.05));
  CHECK_THAT(c.limit, Catch::Contains("slo attainment"));
  // The SLO, not the queue's stability, binds here (rho* is well below 1).
  CHECK(lo < 0.8);
  // Asking for more of the requests within the same target lowers the capacity.
  o.criteria.attainment_pct = 99;
  CHECK(search(s, o).rate_per_s < 0.9 * c.rate_per_s);
}

TEST_CASE("a target no rate meets gives no capacity, and the search says why",
          "[study][capacity]") {
  Scenario s = test::load_yaml(kSingleServerYaml, {"workload.requests=200"});
  s.serving.slo_ttft_s = 0.5 * service_time_s(s);  // faster than one request's own service
  const auto c = search(s);
  CHECK_FALSE(c.found);
  // The start rate fails, and so does the zero-load probe (requests one at a time): the search
  // stops at once, with the figure that misses, instead of halving 20 times first.
  REQUIRE(c.points.size() == 2);
  CHECK(c.zero_load_miss);
  CHECK(c.points[1].rate_per_s == capacity::kZeroLoadFraction * s.serving.arrival_rate_per_s);
  CHECK(c.points[1].result.get("queue_delay_max_s") == 0);
  CHECK_THAT(c.limit, Catch::StartsWith("cannot meet the SLO at any load: zero-load TTFT p90 ") &&
                          Catch::EndsWith(" target"));
  CHECK_THAT(c.points[1].why_not, Catch::Contains("slo attainment 0.0% < 90.0%"));
  // Without the SLO the queue's stability alone decides: the M/D/1 queue is stable below 1/S.
  s.serving.requests = 3000;
  capacity::SearchOptions o;
  o.criteria.check_slo = false;
  const auto stable = search(s, o);
  const double mu = 1 / service_time_s(s);
  REQUIRE(stable.found);
  INFO("capacity " << stable.rate_per_s / mu << " x 1/S, limit " << stable.limit);
  CHECK(stable.rate_per_s > 0.5 * mu);
  CHECK(stable.rate_per_s < 1.1 * mu);
  CHECK_THAT(stable.limit, Catch::Contains("queue not stable"));
}

TEST_CASE("a start rate above the capacity is halved after the zero-load probe passes",
          "[study][capacity]") {
  // D/D/1 again, started at 8 / S: it fails, the zero-load probe passes, and the search halves
  // and bisects down to 1 / S as if it had started below it.
  Scenario s = test::load_yaml(kSingleServerYaml, {"workload.arrival_cv=0"});
  const double mu = 1 / service_time_s(s);
  capacity::SearchOptions o;
  o.tolerance = 0.01;
  o.start_rate_per_s = 8 * mu;
  const auto c = search(s, o);
  REQUIRE(c.found);
  CHECK_FALSE(c.zero_load_miss);
  CHECK(c.points[1].rate_per_s == capacity::kZeroLoadFraction * o.start_rate_per_s);
  CHECK(c.points[1].meets);
  CHECK(c.points[2].rate_per_s == 4 * mu);
  CHECK(c.rate_per_s <= mu * (1 + 1e-9));
  CHECK(c.rate_per_s >= mu * (1 - 2 * o.tolerance));
}

TEST_CASE("the capacity search refuses traces and non-serving scenarios", "[study][capacity]") {
  Scenario s = test::load_yaml(kSingleServerYaml);
  s.serving.trace = "requests.csv";
  CHECK_THROWS_WITH(search(s), Catch::Contains("workload.trace"));
  s = test::load_yaml(kSingleServerYaml);
  s.kind = WorkloadKind::kInference;
  CHECK_THROWS_WITH(search(s), Catch::Contains("workload.kind"));
}

}  // namespace tiersim
