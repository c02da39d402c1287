// The serving workload against queueing theory (M/D/1, Little's law), its determinism, its
// schedulers' bookkeeping, and its errors for bad input.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <fstream>

#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/serving/request_stream.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace tiersim::sim_workloads_serving_serving_test {
namespace {

// Llama-3-8B resident on one H100: fast iterations, a large KV pool.
const char* kServingYaml = R"(
name: serving-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload:
  kind: serving
  arrival_rate: 1
  requests: 200
  prompt_tokens: 256
  output_tokens: 32
)";

// The same without a rate: a trace gives the arrivals.
const char* kTraceYaml = R"(
name: serving-trace-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload: {kind: serving}
)";

sim::RunResult run(std::vector<std::string> sets) {
  return sim::simulate(test::load_yaml(kServingYaml, std::move(sets)));
}

std::string error_of(std::vector<std::string> sets, const std::string& yaml = kServingYaml) {
  try {
    sim::simulate(test::load_yaml(yaml, std::move(sets)));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("serving with batch size 1 and Poisson arrivals is an M/D/1 queue",
          "[workloads][serving]") {
  // Static batches of one request with one output token: every request is one prefill iteration
  // of the same length S, so the server is M/D/1 and the mean wait in queue is
  // rho S / (2 (1 - rho)) (Pollaczek-Khinchine; Kleinrock, Queueing Systems vol. 1, section 5.6).
  const std::vector<std::string> base = {"workload.scheduler=static", "workload.max_batch=1",
                                         "workload.output_tokens=1"};
  auto with = [&](std::vector<std::string> more) {
    auto all = base;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  const sim::RunResult alone = run(with({"workload.requests=1"}));
  const double service_s = alone.get("e2e_mean_s");
  REQUIRE(service_s > 0);
  CHECK(alone.get("queue_delay_mean_s") == 0);
  for (double rho : {0.5, 0.8}) {
    const sim::RunResult r = run(with(
        {"workload.arrival_rate=" + std::to_string(rho / service_s), "workload.requests=200000"}));
    const double theory_s = rho * service_s / (2 * (1 - rho));
    const double sim_s = r.get("queue_delay_mean_s");
    INFO("rho " << rho << ": simulated " << sim_s << " s, Pollaczek-Khinchine " << theory_s
                << " s");
    CHECK(sim_s == Approx(theory_s).epsilon(0.03));
    // Every request is served in S once it starts.
    CHECK(r.get("e2e_mean_s") == Approx(sim_s + service_s).epsilon(1e-9));
  }
}

TEST_CASE("Little's law holds on a continuous-batching run", "[workloads][serving]") {
  // L (the time average of requests queued or running, integrated from the scheduler's queues)
  // equals the throughput times the mean time in system (from each request's timestamps). A
  // request left in a queue after it finished, or lost from one on preemption, breaks it.
  for (const char* scheduler : {"continuous", "chunked", "static"}) {
    const sim::RunResult r =
        run({std::string("workload.scheduler=") + scheduler, "workload.arrival_rate=20",
             "workload.prompt_dist=lognormal", "workload.output_dist=lognormal",
             "workload.requests=2000", "workload.max_batch=16"});
    INFO(scheduler);
    REQUIRE(r.fits);
    CHECK(r.get("mean_requests_in_system") > 1);
    CHECK(r.get("mean_requests_in_system") ==
          Approx(r.get("requests_per_s") * r.get("e2e_mean_s")).epsilon(1e-9));
    CHECK(r.get("requests_completed") == 2000);
  }
}

TEST_CASE("the same seed gives the same run, another seed another", "[workloads][serving]") {
  const std::vector<std::string> sets = {"workload.arrival_cv=3", "workload.prompt_dist=uniform",
                                         "workload.prompt_tokens_min=16"};
  const sim::RunResult a = run(sets), b = run(sets);
  REQUIRE(a.metrics.size() == b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    INFO(a.metrics[i].name);
    CHECK(a.metrics[i].value == b.metrics[i].value);
  }
  auto other = sets;
  other.push_back("workload.seed=2");
  CHECK(run(other).get("e2e_mean_s") != a.get("e2e_mean_s"));
}

TEST_CASE("gamma arrivals have the requested rate and coefficient of variation",
          "[workloads][serving]") {
  for (double cv : {0.5, 1.0, 3.0}) {
    Scenario s = test::load_yaml(kServingYaml);
    s.serving.arrival_rate_per_s = 4;
    s.serving.arrival_cv = cv;
    s.serving.requests = 200000;
    const auto reqs = sim::request_stream(s);
    double sum = 0, sum2 = 0, prev = 0;
    for (const auto& r : reqs) {
      const double gap = r.arrival_s - prev;
      prev = r.arrival_s;
      sum += gap;
      sum2 += gap * gap;
    }
    const double n = double(reqs.size()), mean = sum / n;
    const double sd = std::sqrt(sum2 / n - mean * mean);
    INFO("cv " << cv);
    CHECK(mean == Approx(0.25).epsilon(0.02));
    CHECK(sd / mean == Approx(cv).epsilon(0.03));
  }
}

TEST_CASE("the first request arrives at once, as serving benchmarks send it",
          "[workloads][serving]") {
  Scenario s = test::load_yaml(kServingYaml);
  s.serving.arrival_rate_per_s = 0.5;
  s.serving.requests = 3;
  const auto reqs = sim::request_stream(s);
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].arrival_s == 0);
  CHECK(reqs[1].arrival_s > 0);
  // One request at a rate of one a year: the run is that request alone, not a year's wait first.
  const sim::RunResult r = run({"workload.requests=1", "workload.arrival_rate=3e-8"});
  CHECK(r.get("total_s") == Approx(r.get("e2e_mean_s")).epsilon(1e-9));
  CHECK(r.get("total_s") < 60);
}

TEST_CASE("continuous batching preempts when the KV cache runs out and still serves everyone",
          "[workloads][serving]") {
  // Llama-3-8B on a 24 GB-class share of an H100: the block pool holds a few long requests only.
  const sim::RunResult r =
      run({"workload.gpu_memory_utilization=0.3", "workload.arrival_rate=50",
           "workload.prompt_tokens=2048", "workload.output_tokens=1024", "workload.requests=300"});
  REQUIRE(r.fits);
  CHECK(r.get("preemptions") > 0);
  CHECK(r.get("requests_completed") == 300);
  CHECK(r.get("kv_cache_max_pct") <= 100);
  CHECK(r.get("kv_cache_max_pct") > 90);
}

// Requests that all arrive at once, 1,024 prompt and 1,024 output tokens each, on the scheduler
// and stack given; `n` of them.
sim::RunResult burst(const std::string& stack, const std::string& scheduler, long n,
                     const std::string& admission = "stack") {
  return run({"policy.stack=" + stack, "workload.scheduler=" + scheduler,
              "workload.arrival_rate=1000000", "workload.arrival_cv=0",
              "workload.prompt_tokens=1024", "workload.output_tokens=1024",
              "workload.max_batch=4096", "workload.token_budget=8192",
              "workload.requests=" + std::to_string(n), "workload.kv_admission=" + admission});
}

// How many such requests the pool holds to the end of their outputs: 2,048 tokens in 16-token
// blocks each.
long whole_requests(const sim::RunResult& r) {
  return static_cast<long>(r.get("kv_cache_blocks")) / (2048 / 16);
}

TEST_CASE("GUARANTEED_NO_EVICT admits only what can finish and never preempts",
          "[workloads][serving][no_evict]") {
  // TensorRT-LLM's default capacity policy (stack trtllm-bench): a request starts only when the
  // blocks of its prompt and its whole output are free beyond the running requests' reservations.
  // The pool holds K whole requests: K arriving at once start together; one more waits for the
  // first of them to finish (about their whole lifetime) before its first token, and nobody is
  // preempted.
  const long k = whole_requests(burst("trtllm-bench", "inflight", 1));
  REQUIRE(k > 8);
  const sim::RunResult fit = burst("trtllm-bench", "inflight", k);
  const sim::RunResult over = burst("trtllm-bench", "inflight", k + 1);
  CHECK(fit.get("preemptions") == 0);
  CHECK(over.get("preemptions") == 0);
  CHECK(over.get("requests_completed") == double(k + 1));
  CHECK(fit.get("ttft_max_s") < 0.2 * fit.get("e2e_max_s"));
  CHECK(over.get("ttft_max_s") > 0.9 * fit.get("e2e_max_s"));
  // The same holds under the other schedulers that keep a paged pool.
  for (const char* sched : {"continuous", "chunked"}) {
    const sim::RunResult r = burst("trtllm-bench", sched, 2 * k);
    INFO(sched);
    CHECK(r.get("preemptions") == 0);
    CHECK(r.get("requests_completed") == double(2 * k));
  }
}

TEST_CASE("vLLM's admission on prompt blocks is unchanged: it overcommits and preempts",
          "[workloads][serving][no_evict]") {
  // The optimized stack admits on the prompt's blocks: twice the requests its pool holds whole
  // all start at once (their prompts fit), and decodes that run out of blocks preempt.
  const long k = whole_requests(burst("optimized", "continuous", 1));
  REQUIRE(k > 8);
  const sim::RunResult fit = burst("optimized", "continuous", k);
  const sim::RunResult over = burst("optimized", "continuous", 2 * k);
  CHECK(fit.get("preemptions") == 0);
  CHECK(over.get("preemptions") > 0);
  CHECK(over.get("requests_completed") == double(2 * k));
  // workload.kv_admission overrides the stack's rule either way.
  CHECK(burst("optimized", "continuous", 2 * k, "guaranteed_no_evict").get("preemptions") == 0);
  const long k_trt = whole_requests(burst("trtllm-bench", "inflight", 1));
  CHECK(burst("trtllm-bench", "inflight", 2 * k_trt, "prompt_blocks").get("preemptions") > 0);
}

TEST_CASE("in-flight batching takes prompts whole, after the decodes, within the token budget",
          "[workloads][serving][no_evict]") {
  // 1,024-token prompts and a budget of 2,048: at most two prompts an iteration, never a part of
  // one; the chunked scheduler with the same budget splits them.
  const auto with_budget = [](const std::string& sched, int budget) {
    return run({"policy.stack=trtllm-bench", "workload.scheduler=" + sched,
                "workload.arrival_rate=1000000", "workload.arrival_cv=0",
                "workload.prompt_tokens=1024", "workload.output_tokens=2", "workload.max_batch=64",
                "workload.requests=8", "workload.token_budget=" + std::to_string(budget)});
  };
  // 8 prompts arriving 1 us apart: the first iteration starts with the first alone; from then on
  // each iteration decodes the request that started in the one before (one token) and takes one
  // whole prompt: the 2,047 tokens left hold one, not two (a decode's token counts against
  // max_num_tokens). 8 iterations with a prompt, and one last decode.
  CHECK(with_budget("inflight", 2048).get("iterations") == 9);
  // A budget below the longest prompt cannot run it whole.
  CHECK_THROWS_WITH(with_budget("inflight", 1000), Catch::Contains("below the longest prompt"));
  CHECK(with_budget("chunked", 1000).get("iterations") > 5);
  // A request preempted for recompute would come back longer than the budget and wait forever.
  CHECK_THROWS_WITH(run({"workload.scheduler=inflight", "workload.kv_admission=prompt_blocks",
                         "workload.prompt_tokens=1024", "workload.output_tokens=1024",
                         "workload.token_budget=1536"}),
                    Catch::Contains("preempted for recompute"));
}

TEST_CASE("a budget that holds the in-flight batch below max_batch is said, with the fix",
          "[workloads][serving][no_evict]") {
  const auto scenario = [](int budget) {
    return test::load_yaml(
        kServingYaml,
        {"policy.stack=trtllm-bench", "workload.scheduler=inflight",
         "workload.arrival_rate=1000000", "workload.arrival_cv=0", "workload.prompt_tokens=2048",
         "workload.output_tokens=4", "workload.max_batch=64", "workload.requests=8",
         "workload.token_budget=" + std::to_string(budget)});
  };
  // A prompt as long as the budget starts only when nothing is generating: the 8 requests run one
  // after another, 4 iterations each (the prefill makes the first token). The warning says so and
  // names the budget that lets max_batch run: 2,048 + 63.
  const Scenario alone = scenario(2048);
  REQUIRE(alone.notes.size() == 1);
  CHECK(alone.notes[0].kind == InputNote::Kind::kWarning);
  CHECK(alone.notes[0].subject == "workload.token_budget");
  CHECK_THAT(alone.notes[0].message,
             Catch::Contains("run one at a time") && Catch::Contains("at least 2111"));
  CHECK(sim::simulate(alone).get("iterations") == 32);
  // 64 tokens of room beside the prompt: 65 at once, more than max_batch: nothing to say. With
  // 3, at most 4 at once: said, and the run overlaps the requests.
  const Scenario some = scenario(2112);
  CHECK(some.notes.empty());
  const Scenario few = scenario(2048 + 3);
  REQUIRE(few.notes.size() == 1);
  CHECK_THAT(few.notes[0].message, Catch::Contains("at most 4 such requests run at once"));
  CHECK(sim::simulate(few).get("iterations") < 32);
  // Sessions resend their history, so their prompts are not prompt_tokens long: not said at load.
  CHECK(test::load_yaml(kServingYaml, {"workload.scheduler=inflight", "workload.prompt_tokens=2048",
                                       "workload.token_budget=2048", "workload.turns=3"})
            .notes.empty());
}

TEST_CASE("swap preemption keeps long prompts' KV cache instead of prefilling them again",
          "[workloads][serving]") {
  // Long requests and a KV pool that holds a few of them: every preemption either prefills
  // thousands of tokens again (recompute) or copies their blocks over PCIe and back (swap).
  // On an H100 re-prefilling 4,000+ tokens of Llama-3-8B is about 0.06 PFLOP of compute, while
  // their 0.5 GB of KV cache crosses PCIe Gen5 both ways in a fraction of that.
  const std::vector<std::string> load = {"workload.gpu_memory_utilization=0.3",
                                         "workload.arrival_rate=50",
                                         "workload.prompt_tokens=4000",
                                         "workload.output_tokens=4000",
                                         "workload.requests=60",
                                         "workload.swap_space=64GiB"};
  auto with = [&](const std::string& mode) {
    auto sets = load;
    sets.push_back("workload.preemption=" + mode);
    return run(sets);
  };
  const sim::RunResult recompute = with("recompute");
  const sim::RunResult swap = with("swap");
  REQUIRE(recompute.fits);
  REQUIRE(swap.fits);
  CHECK(recompute.get("preemptions") > 0);
  CHECK_FALSE(recompute.has("swapped_requests"));
  CHECK(swap.get("swapped_requests") == swap.get("preemptions"));
  CHECK(swap.get("requests_completed") == 60);
  // Every request swapped out comes back: the bytes out and in are the same blocks.
  CHECK(swap.get("swap_out_bytes") > 0);
  CHECK(swap.get("swap_in_bytes") == Approx(swap.get("swap_out_bytes")));
  INFO("e2e mean: recompute " << recompute.get("e2e_mean_s") << " s, swap "
                              << swap.get("e2e_mean_s") << " s");
  CHECK(swap.get("e2e_mean_s") < recompute.get("e2e_mean_s"));
  CHECK(swap.get("total_s") < recompute.get("total_s"));
  // The copies are booked on the PCIe links, both ways.
  double d2h_busy_s = 0, h2d_busy_s = 0;
  for (const auto& u : swap.utilization) {
    if (u.name.find("d2h") != std::string::npos) d2h_busy_s += u.busy_s;
    if (u.name.find("h2d") != std::string::npos) h2d_busy_s += u.busy_s;
  }
  CHECK(d2h_busy_s > 0);
  CHECK(h2d_busy_s > 0);
  // The copies cost the PCIe link's rate (model/perf.hpp h2d_gbps, d2h_gbps): over a 0.5 GB/s
  // link, a second per GB each way, re-prefilling is the cheaper way back.
  auto slow = load;
  slow.insert(slow.end(), {"hardware.gpu.pcie_h2d_gbps=0.5", "hardware.gpu.pcie_d2h_gbps=0.5",
                           "workload.preemption=swap"});
  CHECK(run(slow).get("e2e_mean_s") > recompute.get("e2e_mean_s"));
}

TEST_CASE("a swap-out that does not fit in the swap space stops the run, as vLLM aborts",
          "[workloads][serving]") {
  // vLLM V0 raises "Aborted due to the lack of CPU swap space" when its CPU block pool cannot
  // take a victim (vllm/core/scheduler.py Scheduler._swap_out): the run reports it.
  const std::vector<std::string> load = {"workload.gpu_memory_utilization=0.3",
                                         "workload.arrival_rate=50",
                                         "workload.prompt_tokens=6000",
                                         "workload.output_tokens=1024",
                                         "workload.requests=60",
                                         "workload.preemption=swap"};
  auto small = load;
  small.push_back("workload.swap_space=100MiB");  // less than one request's 0.8 GB
  const sim::RunResult r = run(small);
  CHECK_FALSE(r.fits);
  CHECK_THAT(r.shortfall, Catch::Contains("workload.swap_space"));
  CHECK_THAT(r.shortfall, Catch::Contains("lack of CPU swap space"));
  auto big = load;
  big.push_back("workload.swap_space=64GiB");
  CHECK(run(big).fits);
}

TEST_CASE("streamed weights cost once per iteration, shared by the requests in it",
          "[workloads][serving]") {
  // Weights in host DRAM: a decode iteration of 1 or of 32 requests moves the same bytes over
  // PCIe, so a static batch of 32 takes about as long as a batch of 1 (fetch-bound).
  const std::vector<std::string> dram = {"policy.weights=cpu", "workload.scheduler=static",
                                         "workload.max_wait=10s", "workload.arrival_rate=1000",
                                         "hardware.host.dram_gb=512"};
  auto with = [&](const std::string& batch) {
    auto s = dram;
    s.push_back("workload.max_batch=" + batch);
    s.push_back("workload.requests=" + batch);
    return run(s);
  };
  const sim::RunResult one = with("1"), many = with("32");
  const double iteration_s = one.get("e2e_mean_s") / 32;  // 1 prefill + 31 decode steps
  CHECK(one.bottleneck == "pcie-h2d");
  CHECK(many.get("e2e_max_s") < 1.2 * 32 * iteration_s);
  CHECK(many.get("throughput_tokens_per_s") > 25 * one.get("throughput_tokens_per_s"));
}

TEST_CASE("an iteration's host work is paid once per iteration", "[workloads][serving][step]") {
  // One request alone: 1 prefill iteration and 31 decode iterations of one sequence each, on the
  // default stack, whose execution model the test sets.
  const Scenario s = test::load_yaml(kServingYaml, {"workload.requests=1"});
  sim::SimOptions none, host;
  none.exec.step_overhead_s = 0;
  none.exec.step_overhead_per_sequence_s = 0;
  host.exec.step_overhead_s = 1e-3;
  host.exec.step_overhead_per_sequence_s = 10e-6;
  const double a = sim::simulate(s, none).get("e2e_mean_s");
  const double b = sim::simulate(s, host).get("e2e_mean_s");
  CHECK(b - a == Approx(32 * (1e-3 + 10e-6)));
}

TEST_CASE("a tensor-parallel iteration's all-reduces lie on the critical path, not a gap",
          "[workloads][serving][tp][breakdown]") {
  // Qwen3-32B over two RTX PRO 6000 boards without NVLink: each iteration's all-reduces follow
  // its kernels and hold it up, so the breakdown charges them, and nothing to waiting.
  sim::SimOptions options;
  options.breakdown = true;
  const sim::RunResult r = sim::simulate(
      test::load_yaml(kServingYaml,
                      {"hardware.gpu.model=RTX-PRO-6000-Blackwell-Server", "hardware.gpu.count=2",
                       "model.name=qwen3-32b", "policy.parallelism.tensor=2",
                       "workload.requests=20", "workload.arrival_rate=2"}),
      options);
  const double on_path =
      r.find("phase_prefill_allreduce_s").value_or(0) + r.get("phase_decode_allreduce_s");
  CHECK(on_path > 0.02 * r.get("total_s"));
  CHECK_FALSE(r.has("phase_decode_waiting_s"));
}

TEST_CASE("serving reads Azure traces of 2023 and 2024 and plain CSV traces",
          "[workloads][serving]") {
  test::TempDir dir;
  write(dir.file("az2023.csv"),
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.6805900,374,44\n"
        "2023-11-16 18:15:50.9951690,396,109\n");
  write(dir.file("az2024.csv"),
        "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
        "2024-05-12 23:59:59.500000+00:00,100,10\r\n"
        "2024-05-13 00:00:01+00:00,200,0\r\n");
  write(dir.file("plain.csv"), "arrival_s,prompt_tokens,output_tokens\n0.5,10,2\n0.25,20,3\n");
  auto a = sim::read_trace(dir.file("az2023.csv"), 10, 0);
  REQUIRE(a.size() == 2);
  CHECK(a[1].arrival_s == Approx(4.314579).epsilon(1e-9));
  CHECK(a[1].prompt_tokens == 396);
  CHECK(a[1].output_tokens == 109);
  auto b = sim::read_trace(dir.file("az2024.csv"), 10, 0);
  REQUIRE(b.size() == 2);
  CHECK(b[1].arrival_s == Approx(1.5).epsilon(1e-12));  // across midnight
  CHECK(b[1].output_tokens == 1);                       // 0 generated: the prefill's token
  auto c = sim::read_trace(dir.file("plain.csv"), 1, 0);
  CHECK(c.size() == 1);
  auto d = sim::read_trace(dir.file("plain.csv"), 10, 0);
  REQUIRE(d.size() == 2);
  CHECK(d[0].prompt_tokens == 20);  // sorted by arrival, relative to the first
  CHECK(d[1].arrival_s == Approx(0.25));

  const sim::RunResult r =
      sim::simulate(test::load_yaml(kTraceYaml, {"workload.trace=" + dir.file("az2023.csv")}));
  CHECK(r.get("requests_completed") == 2);
}

TEST_CASE("bad serving input names the file, the line and the key", "[workloads][serving]") {
  test::TempDir dir;
  // A negative rate: the scenario's line and key.
  std::string e = error_of({}, R"(
name: serving-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload:
  kind: serving
  arrival_rate: -2
)");
  CHECK_THAT(e, Catch::Contains("test.yaml:8: workload.arrival_rate"));
  // Neither a rate nor a trace.
  e = error_of({}, R"(
name: serving-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload: {kind: serving}
)");
  CHECK_THAT(e, Catch::Contains("workload.arrival_rate"));
  // An SLO without a unit.
  e = error_of({}, std::string(kServingYaml) + "  slo_ttft: 2\n");
  CHECK_THAT(e, Catch::Contains("test.yaml:12: workload.slo_ttft"));
  CHECK_THAT(e, Catch::Contains("no unit"));
  CHECK(test::load_yaml(std::string(kServingYaml) + "  slo_tbt: 200ms\n").serving.slo_tbt_s ==
        Approx(0.2));
  // Prompt and output beyond the model's context (Llama-3-8B: 8192 tokens in the catalog).
  e = error_of({"workload.prompt_tokens=8000", "workload.output_tokens=500"});
  CHECK_THAT(e, Catch::Contains("workload.output_tokens"));
  CHECK_THAT(e, Catch::Contains("8192"));
  // Traces: empty, header only, a malformed row, a row beyond the context.
  write(dir.file("empty.csv"), "");
  e = error_of({"workload.trace=" + dir.file("empty.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("empty.csv"));
  CHECK_THAT(e, Catch::Contains("workload.trace: the trace is empty"));
  write(dir.file("header.csv"), "arrival_s,prompt_tokens,output_tokens\n");
  e = error_of({"workload.trace=" + dir.file("header.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("header.csv:1: workload.trace"));
  write(dir.file("bad.csv"),
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47,abc,44\n");
  e = error_of({"workload.trace=" + dir.file("bad.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("bad.csv:3: workload.trace"));
  CHECK_THAT(e, Catch::Contains("'abc'"));
  write(dir.file("time.csv"), "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,374,44\n");
  e = error_of({"workload.trace=" + dir.file("time.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("time.csv:2: workload.trace"));
  write(dir.file("long.csv"), "arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,8000,500\n");
  e = error_of({"workload.trace=" + dir.file("long.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("long.csv:3: workload.trace"));
  CHECK_THAT(e, Catch::Contains("context"));
  write(dir.file("cols.csv"), "when,prompt,out\n0,1,1\n");
  e = error_of({"workload.trace=" + dir.file("cols.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("cols.csv:1: workload.trace"));
  e = error_of({"workload.trace=" + dir.file("missing.csv")}, kTraceYaml);
  CHECK_THAT(e, Catch::Contains("missing.csv: workload.trace: cannot open"));
}

TEST_CASE("malformed trace timestamps and numbers are errors naming file, line and field",
          "[workloads][serving]") {
  test::TempDir dir;
  // The error of read_trace on a two-row Azure trace whose second stamp is `stamp`.
  auto azure_error = [&](const std::string& stamp) -> std::string {
    write(dir.file("az.csv"), "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                              "2023-11-16 18:15:46.68,374,44\n" + stamp + ",396,109\n");
    try {
      sim::read_trace(dir.file("az.csv"), 10, 0);
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains("az.csv:3: workload.trace"));
      return e.what();
    }
    return "(no error)";
  };
  // NaN seconds used to pass `sec < 0 || sec >= 61` and make `run` spin forever; inf, hex and
  // signed fields were taken by sscanf too.
  for (const char* bad : {"2023-11-16 18:15:nan", "2023-11-16 18:15:inf", "2023-11-16 18:15:0x1p4",
                          "2023-11-16 18:15:-1", "2023-11-16 18:+5:00", "2023-11-16 18:15: 7",
                          "2023-11-16 18:15:07.", "2023-11-16 18:15:07.5garbage"})
    CHECK_THAT(azure_error(bad), Catch::Contains("expected a timestamp"));
  CHECK_THAT(azure_error("2023-02-31 18:15:00"), Catch::Contains("day 31 does not exist"));
  CHECK_THAT(azure_error("2023-02-29 18:15:00"), Catch::Contains("day 29"));
  CHECK(azure_error("2024-02-29 18:15:00") == "(no error)");  // a leap year
  CHECK_THAT(azure_error("2023-11-16 18:15:47+99:99"), Catch::Contains("UTC offset +99:99"));
  CHECK_THAT(azure_error("2023-11-16 24:00:00"), Catch::Contains("time of day"));
  CHECK_THAT(azure_error("2023-13-16 18:15:47"), Catch::Contains("month 13"));
  CHECK(azure_error("2023-11-16T18:15:47.5Z") == "(no error)");
  CHECK(azure_error("2023-11-16 18:15:47.5-08:00") == "(no error)");
  // Rows years apart: not a trace, and an arrival the energy model would make infinite.
  CHECK_THAT(azure_error("9999-11-16 18:15:47"), Catch::Contains("from the first request"));

  auto plain_error = [&](const std::string& row) -> std::string {
    write(dir.file("p.csv"), "arrival_s,prompt_tokens,output_tokens\n0,10,2\n" + row + "\n");
    try {
      sim::read_trace(dir.file("p.csv"), 10, 0);
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains("p.csv:3: workload.trace"));
      return e.what();
    }
    return "(no error)";
  };
  CHECK_THAT(plain_error("1e308,10,2"), Catch::Contains("column arrival_s"));
  CHECK_THAT(plain_error("0x10,10,2"), Catch::Contains("an arrival time in seconds"));
  CHECK_THAT(plain_error("nan,10,2"), Catch::Contains("an arrival time in seconds"));
  CHECK_THAT(plain_error("1,0x10,2"), Catch::Contains("prompt length"));
  CHECK(plain_error("1.5e2,10,2") == "(no error)");
  // A thousands separator splits a cell: read as prompt 1 and output 020, it ran without a word.
  CHECK_THAT(plain_error("1,1,020,2"),
             Catch::Contains("expected 3 comma-separated columns (as the header names), got 4"));
  CHECK_THAT(plain_error("1,10"), Catch::Contains("got 2"));
  CHECK_THAT(plain_error("1,1000000000000,2"), Catch::Contains("a whole prompt length in 1..1e9"));
  CHECK_THAT(plain_error("1,10,-2"), Catch::Contains("a whole output length in 0..1e9"));
  // A 5 MB cell is not echoed whole.
  const std::string e = plain_error(std::string(5u << 20, '7') + "x,10,2");
  CHECK(e.size() < 1000);
  CHECK_THAT(e, Catch::Contains("bytes in all"));
}

TEST_CASE("a KV cache block larger than the pool is an error naming workload.block_tokens",
          "[workloads][serving]") {
  // Llama-3-8B: 128 KiB of KV cache per token, so a million-token block outgrows an H100's pool.
  // With no whole block the KV metrics divided by zero ("kv_cache_mean_pct is not a finite
  // number").
  const std::string e = error_of({"workload.block_tokens=1000000"});
  CHECK_THAT(e, Catch::Contains("workload.block_tokens") && Catch::Contains("larger than the KV"));
}

TEST_CASE("trace files follow the input-file rule: regular files, a BOM accepted",
          "[workloads][serving]") {
  test::TempDir dir;
  write(dir.file("bom.csv"), "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n"
                             "2023-11-16 18:15:46.68,374,44\n");
  CHECK(sim::read_trace(dir.file("bom.csv"), 10, 0).size() == 1);
  // /dev/zero used to be read for 2 GB before failing; a FIFO blocked the open.
  try {
    sim::read_trace("/dev/zero", 10, 0);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/dev/zero: workload.trace: is not a regular file"));
  }
  const std::string fifo = dir.file("fifo.csv");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(sim::read_trace(fifo, 10, 0), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(sim::read_trace(dir.str(), 10, 0), Catch::Contains("is a directory"));
}

TEST_CASE("a stack that keeps only the window holds a sliding layer's window in the block pool",
          "[workloads][serving][window]") {
  // Four requests of 6,000 + 64 tokens at once: without a window each holds 379 blocks of 16
  // tokens at the end; with a 1,024-token window on every layer, 64.
  const std::vector<std::string> sets = {"workload.requests=4", "workload.arrival_rate=1000",
                                         "workload.prompt_tokens=6000", "workload.output_tokens=64",
                                         "policy.stack=optimized"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), sets.begin(), sets.end());
    return run(more);
  };
  const sim::RunResult full = with({});
  const sim::RunResult window = with({"model.sliding_window=1024"});
  CHECK(window.get("kv_cache_max_pct") ==
        Approx(full.get("kv_cache_max_pct") * 64.0 / 379.0).epsilon(0.02));
  CHECK(window.get("tpot_mean_s") < full.get("tpot_mean_s"));  // fewer keys read per step
  // Half the layers attending fully hold half the blocks and a little more.
  const sim::RunResult half = with({"model.sliding_window=1024", "model.full_attention_layers=16"});
  CHECK(half.get("kv_cache_max_pct") ==
        Approx(full.get("kv_cache_max_pct") * 222.0 / 379.0).epsilon(0.02));
}

TEST_CASE("with KV tiers in host DRAM the block pool holds every token of a sliding layer",
          "[workloads][serving][window]") {
  // vLLM turns its hybrid KV cache manager off when a KV connector is configured: each layer
  // holds every token, and attention still reads only the window (model/stack.hpp
  // window_cache_with_kv_tiers). The same four requests as above.
  const std::vector<std::string> sets = {
      "workload.requests=4",       "workload.arrival_rate=1000", "workload.prompt_tokens=6000",
      "workload.output_tokens=64", "policy.stack=optimized",     "workload.kv_host_cache=4GB"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), sets.begin(), sets.end());
    return run(more);
  };
  const sim::RunResult full = with({});
  const sim::RunResult window = with({"model.sliding_window=1024"});
  CHECK(window.get("kv_cache_max_pct") == Approx(full.get("kv_cache_max_pct")));
  CHECK(window.get("tpot_mean_s") < full.get("tpot_mean_s"));  // still fewer keys read per step
  // Without the tier the same window holds 64 blocks of a request's 379.
  const sim::RunResult untiered =
      run({"workload.requests=4", "workload.arrival_rate=1000", "workload.prompt_tokens=6000",
           "workload.output_tokens=64", "policy.stack=optimized", "model.sliding_window=1024"});
  CHECK(untiered.get("kv_cache_max_pct") ==
        Approx(window.get("kv_cache_max_pct") * 64.0 / 379.0).epsilon(0.02));
}

}  // namespace tiersim
