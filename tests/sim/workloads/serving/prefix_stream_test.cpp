// Requests with prefix structure: the Mooncake and conversation readers, the synthetic sessions,
// their errors for bad input, and what prefix caching over the tiers does to a serving run.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/perf.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/serving/names.hpp"
#include "sim/workloads/serving/prefix_stream.hpp"
#include "tests/support.hpp"
#include "tests/temp_dir.hpp"

namespace tiersim::sim_workloads_serving_prefix_stream_test {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A Mooncake trace of ten requests sharing their first two 512-token blocks, one second apart.
void write_shared_prefix_trace(const std::string& path) {
  std::string jsonl;
  for (int i = 0; i < 10; ++i)
    jsonl += "{\"timestamp\": " + std::to_string(1000 * i) +
             ", \"input_length\": 1500, \"output_length\": 20, \"hash_ids\": [0, 1, " +
             std::to_string(100 + i) + "]}\n";
  write(path, jsonl);
}

// Llama-3-8B on one H100 serving multi-turn sessions (the KV pool is limited below to make the
// GPU tier small against the sessions' history).
const char* kSessionsYaml = R"(
name: sessions-test
hardware:
  gpu: {model: H100-SXM}
  host: {model: generic-2s-ddr5}
  nvme: {model: generic-gen4, count: 1}
model: {name: llama-3-8b}
workload:
  kind: serving
  arrival_rate: 4
  requests: 600
  turns: 5
  think_time: 20s
  shared_prefixes: 20
  shared_prefix_tokens: 1024
  prompt_tokens: 300
  output_tokens: 150
  prefix_block_tokens: 256
)";

sim::RunResult run(std::vector<std::string> sets) {
  return sim::simulate(test::load_yaml(kSessionsYaml, std::move(sets)));
}

}  // namespace

TEST_CASE("a Mooncake trace gives arrivals, lengths and block hashes", "[workloads][serving]") {
  test::TempDir dir;
  write(dir.file("m.jsonl"),
        "{\"timestamp\": 1000, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [0, 1, "
        "2]}\n"
        "\n"
        "{\"timestamp\": 500, \"input_length\": 600, \"output_length\": 0, \"hash_ids\": [0, 7],"
        " \"session_id\": \"a\"}\n");
  const auto r = sim::read_mooncake_trace(dir.file("m.jsonl"), 10, 0, 512);
  REQUIRE(r.size() == 2);
  CHECK(r[0].arrival_s == 0);  // sorted, relative to the first
  CHECK(r[0].prompt_tokens == 600);
  CHECK(r[0].output_tokens == 1);  // 0 generated counts as the one prefill samples
  CHECK(r[0].block_hashes == std::vector<std::uint64_t>{0, 7});
  CHECK(r[1].arrival_s == Approx(0.5));
  CHECK(r[1].block_hashes.size() == 3);
  CHECK(sim::read_mooncake_trace(dir.file("m.jsonl"), 1, 0, 512).size() == 1);
}

TEST_CASE("bad Mooncake and conversation traces name the file, the line and the key",
          "[workloads][serving]") {
  test::TempDir dir;
  const std::string m = dir.file("bad.jsonl");
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
           "{\"timestamp\": 10, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, "
           "\"x\"]}\n");
  std::string e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("bad.jsonl:2"));
  CHECK_THAT(e, Catch::Contains("\"hash_ids\""));
  CHECK_THAT(e, Catch::Contains("integer"));
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": 3}\n");
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("bad.jsonl:1"));
  CHECK_THAT(e, Catch::Contains("\"hash_ids\": expected an array"));
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2, "
           "3]}\n");
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("3 block ids for 600 input tokens"));
  write(m, "{\"timestamp\": -5, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": []}\n");
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("\"timestamp\""));
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 256); });
  CHECK_THAT(e, Catch::Contains("workload.prefix_block_tokens"));

  const std::string c = dir.file("conv.csv");
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
           "a,1,0,100,10\n"
           "b,1,1,100,10\n"
           "a,3,2,300,10\n");
  e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 16); });
  CHECK_THAT(e, Catch::Contains("conv.csv:4: workload.trace"));
  CHECK_THAT(e, Catch::Contains("column turn"));
  CHECK_THAT(e, Catch::Contains("follows turn 1; expected turn 2"));
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
           "a,1,5,100,10\n"
           "a,2,2,300,10\n");
  e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 16); });
  CHECK_THAT(e, Catch::Contains("conv.csv:3"));
  CHECK_THAT(e, Catch::Contains("before turn 1"));
  e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 0); });
  CHECK_THAT(e, Catch::Contains("workload.prefix_block_tokens"));
}

TEST_CASE("Mooncake hash ids are read exactly, one object per line, within the trace span",
          "[workloads][serving]") {
  test::TempDir dir;
  const std::string m = dir.file("ids.jsonl");
  // Two ids that a double cannot tell apart (2^53 and 2^53 + 1) stay two blocks.
  write(m, "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 5, "
           "\"hash_ids\": [9007199254740992, 9007199254740993]}\n");
  const auto r = sim::read_mooncake_trace(m, 10, 0, 512);
  REQUIRE(r.size() == 1);
  REQUIRE(r[0].block_hashes.size() == 2);
  CHECK(r[0].block_hashes[0] == 9007199254740992ULL);
  CHECK(r[0].block_hashes[1] == 9007199254740993ULL);
  // The largest 64-bit id is an id; one more, a fraction or an exponent is not.
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, "
           "\"hash_ids\": [18446744073709551615]}\n");
  CHECK(sim::read_mooncake_trace(m, 10, 0, 512)[0].block_hashes[0] == 18446744073709551615ULL);
  for (const char* bad : {"18446744073709551616", "1.5", "1e3", "-1"}) {
    write(m, std::string("{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, "
                         "\"hash_ids\": [") + bad + "]}\n");
    CHECK_THAT(error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); }),
               Catch::Contains("expected a non-negative integer block hash id"));
  }
  // An empty object followed by text was taken as a row with nothing in it.
  write(m, "{} trailing\n");
  CHECK_THAT(error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); }),
             Catch::Contains("unexpected text after the JSON object"));
  // A row years after the first is a malformed timestamp, as for the other trace formats.
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": []}\n"
           "{\"timestamp\": 100000000001000, \"input_length\": 600, \"output_length\": 5, "
           "\"hash_ids\": []}\n");
  std::string e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("ids.jsonl:2"));
  CHECK_THAT(e, Catch::Contains("a trace spans at most that"));
  // Epoch milliseconds are fine: the span counts from the first request.
  write(m, "{\"timestamp\": 1700000000000, \"input_length\": 600, \"output_length\": 5, "
           "\"hash_ids\": []}\n"
           "{\"timestamp\": 1700000001000, \"input_length\": 600, \"output_length\": 5, "
           "\"hash_ids\": []}\n");
  const auto epoch = sim::read_mooncake_trace(m, 10, 0, 512);
  REQUIRE(epoch.size() == 2);
  CHECK(epoch[1].arrival_s - epoch[0].arrival_s == Approx(1.0));
  const std::string c = dir.file("span.csv");
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
           "a,1,0,100,10\n"
           "b,1,1e300,100,10\n");
  e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 16); });
  CHECK_THAT(e, Catch::Contains("span.csv:3"));
  CHECK_THAT(e, Catch::Contains("column arrival_s"));
  CHECK_THAT(e, Catch::Contains("a trace spans at most that"));
}

TEST_CASE("prefix traces follow the input-file rule: regular files, a BOM, excerpted errors",
          "[workloads][serving]") {
  test::TempDir dir;
  // A FIFO used to block the format sniff's open (and /dev/zero to be read without end): both are
  // refused before any open, by the sniff and by each reader.
  const std::string fifo = dir.file("fifo.jsonl");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    ServingWorkload w;
    w.trace = path;
    w.requests = 10;
    CHECK_THROWS_WITH(sim::prefix_request_stream(w, 0),
                      Catch::Contains(path + ": workload.trace: is not a regular file"));
    CHECK_THROWS_WITH(sim::read_mooncake_trace(path, 10, 0, 512),
                      Catch::Contains("not a regular file"));
    CHECK_THROWS_WITH(sim::read_conversation_trace(path, 10, 0, 16),
                      Catch::Contains("not a regular file"));
  }
  // A byte order mark before the first line: still a Mooncake trace, still a conversation CSV.
  ServingWorkload w;
  w.requests = 10;
  w.prefix_block_tokens = 512;
  w.trace = dir.file("bom.jsonl");
  write(w.trace,
        "\xEF\xBB\xBF{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, "
        "\"hash_ids\": [0, 1]}\n");
  auto r = sim::prefix_request_stream(w, 0);
  REQUIRE(r);
  CHECK(r->size() == 1);
  w.trace = dir.file("bom.csv");
  w.prefix_block_tokens = 16;
  write(w.trace,
        "\xEF\xBB\xBF"
        "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\r\n"
        "a,1,0,100,10\r\n");
  r = sim::prefix_request_stream(w, 0);
  REQUIRE(r);
  CHECK(r->size() == 1);
  // Decimal numbers only, as in the plain trace reader; a huge cell is quoted as an excerpt.
  const std::string c = dir.file("conv.csv");
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\na,1,0x10,100,10\n");
  std::string e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 16); });
  CHECK_THAT(e, Catch::Contains("conv.csv:2") && Catch::Contains("column arrival_s"));
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\na,1,0," +
               std::string(100000, '7') + ",10\n");
  e = error_of([&] { sim::read_conversation_trace(c, 10, 0, 16); });
  CHECK_THAT(e, Catch::Contains("column prompt_tokens") && Catch::Contains("bytes in all"));
  CHECK(e.size() < 400);
  const std::string m = dir.file("m.jsonl");
  write(m,
        "{\"timestamp\": 0x10, \"input_length\": 600, \"output_length\": 5, "
        "\"hash_ids\": []}\n");
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("m.jsonl:1") && Catch::Contains("\"timestamp\""));
  write(m, "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [" +
               std::string(100000, '1') + "]}\n");
  e = error_of([&] { sim::read_mooncake_trace(m, 10, 0, 512); });
  CHECK_THAT(e, Catch::Contains("\"hash_ids\": element 0") && Catch::Contains("bytes in all"));
  CHECK(e.size() < 400);
}

TEST_CASE("a conversation's turns share their history's blocks", "[workloads][serving]") {
  test::TempDir dir;
  const std::string c = dir.file("conv.csv");
  write(c, "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
           "a,1,0,100,28\n"
           "b,1,1,100,28\n"
           "a,2,3,200,10\n");
  const auto r = sim::read_conversation_trace(c, 10, 0, 64);
  REQUIRE(r.size() == 3);
  CHECK(r[0].block_hashes.size() == 2);  // (100 + 28) / 64
  CHECK(r[2].block_hashes.size() == 3);  // (200 + 10) / 64
  CHECK(r[2].block_hashes[0] == r[0].block_hashes[0]);
  CHECK(r[2].block_hashes[1] == r[0].block_hashes[1]);
  CHECK(r[1].block_hashes[0] != r[0].block_hashes[0]);
}

TEST_CASE("bad prefix-cache configuration names the line and the key", "[workloads][serving]") {
  std::string e = error_of([] { test::load_yaml(std::string(kSessionsYaml) +
                                                "  kv_host_cache: 100TB\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_host_cache"));
  CHECK_THAT(e, Catch::Contains("DRAM"));
  e = error_of([] { test::load_yaml(kSessionsYaml, {"workload.prefix_block_tokens=0"}); });
  CHECK_THAT(e, Catch::Contains("workload.prefix_block_tokens"));
  e = error_of([] {
    test::load_yaml(std::string(kSessionsYaml) + "  prefix_block_tokens: 0\n");
  });
  CHECK_THAT(e, Catch::Contains("test.yaml:"));
  CHECK_THAT(e, Catch::Contains("workload.prefix_block_tokens"));
  e = error_of([] { test::load_yaml(std::string(kSessionsYaml) + "  kv_nvme_cache: 100TB\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_nvme_cache"));
  e = error_of([] {
    test::load_yaml(std::string(kSessionsYaml) + "  kv_host_cache: 8GB\n  scheduler: static\n");
  });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_host_cache"));
  CHECK_THAT(e, Catch::Contains("static"));
  e = error_of([] {
    test::load_yaml(std::string(kSessionsYaml) + "  kv_host_cache: 8GB\n",
                    {"workload.prefix_caching=false"});
  });
  CHECK_THAT(e, Catch::Contains("workload.prefix_caching"));
}

TEST_CASE("synthetic sessions are deterministic, in arrival order, and grow their history",
          "[workloads][serving]") {
  const Scenario s = test::load_yaml(kSessionsYaml);
  const auto a = sim::request_stream(s);
  const auto b = sim::request_stream(s);
  REQUIRE(a.size() == 600);
  bool same = true;
  for (std::size_t i = 0; i < a.size(); ++i)
    same = same && a[i].arrival_s == b[i].arrival_s && a[i].prompt_tokens == b[i].prompt_tokens &&
           a[i].block_hashes == b[i].block_hashes;
  CHECK(same);
  const auto c = sim::request_stream(test::load_yaml(kSessionsYaml, {"workload.seed=2"}));
  CHECK(c[10].arrival_s != a[10].arrival_s);
  long longer = 0;
  double mean_prompt = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i > 0) CHECK(a[i].arrival_s >= a[i - 1].arrival_s);
    mean_prompt += a[i].prompt_tokens / 600.0;
    longer += a[i].prompt_tokens > 1024 + 300;
    // Every session opens with one of the shared prompts: its 4 blocks of 256 tokens.
    CHECK(a[i].block_hashes.size() >= 4);
  }
  CHECK(longer > 200);  // later turns carry the history
  CHECK(mean_prompt > 1500);
}

TEST_CASE("prefix caching over GPU, DRAM and NVMe: hits cut prefill, tiers add hits",
          "[workloads][serving]") {
  // Off: no prefix-caching metrics, the run as before.
  const auto off = run({"workload.prefix_caching=false"});
  CHECK_FALSE(off.has("kv_hit_pct"));
  const auto gpu = run({});
  CHECK(gpu.get("kv_hit_pct") > 30);
  CHECK(gpu.get("kv_hit_host_pct") == 0);
  CHECK(gpu.get("kv_recompute_avoided_tokens") > 0);
  // Reused prefixes are not prefilled: a shorter time to the first token.
  CHECK(gpu.get("ttft_mean_s") < off.get("ttft_mean_s"));
  // A GPU pool too small for the sessions' history (the rest of the memory taken): the DRAM tier
  // catches what it evicts, and the NVMe tier what DRAM evicts.
  const std::vector<std::string> small = {"workload.gpu_memory_utilization=0.26"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), small.begin(), small.end());
    return run(more);
  };
  const auto g = with({});
  const auto h = with({"workload.kv_host_cache=8GB"});
  const auto n = with({"workload.kv_host_cache=8GB", "workload.kv_nvme_cache=200GB"});
  INFO("hit %: GPU " << g.get("kv_hit_pct") << ", +DRAM " << h.get("kv_hit_pct") << ", +NVMe "
                     << n.get("kv_hit_pct"));
  CHECK(h.get("kv_hit_host_pct") > 0);
  CHECK(h.get("kv_hit_pct") > g.get("kv_hit_pct") + 5);
  CHECK(n.get("kv_hit_nvme_pct") > 0);
  CHECK(n.get("kv_hit_pct") > h.get("kv_hit_pct") + 5);
  CHECK(h.get("kv_host_read_bytes") > 0);
  CHECK(n.get("kv_nvme_write_bytes") > 0);
  CHECK(n.get("nvme_drive_writes_per_day") > 0);
  // The wear against the drive's endurance rating (drives.yaml dwpd); none for an unrated drive.
  CHECK(n.get("nvme_dwpd_rating") == 1);
  CHECK(n.get("nvme_dwpd_used_pct") ==
        Approx(100 * n.get("nvme_drive_writes_per_day") / n.get("nvme_dwpd_rating")));
  const auto unrated = with({"workload.kv_host_cache=8GB", "workload.kv_nvme_cache=200GB",
                             "hardware.nvme.dwpd=0"});
  CHECK(unrated.has("nvme_drive_writes_per_day"));
  CHECK_FALSE(unrated.has("nvme_dwpd_used_pct"));
  // Bytes moved are whole blocks: 256 tokens x 128 KiB per token (Llama-3-8B fp16: 32 layers,
  // 8 KV heads of 128, K and V).
  const double block = 256.0 * 2 * 32 * 8 * 128 * 2;
  const double blocks = h.get("kv_host_read_bytes") / block;
  CHECK(blocks == Approx(std::round(blocks)));
  // Load or recompute: with a drive that reads at 50 MB/s, loading a prefix from NVMe takes
  // longer than recomputing it, so if_faster recomputes (no NVMe hits) and the first tokens come
  // sooner than when every hit is loaded; with one that reads at 60 GB/s it loads as `always`
  // does. (With the catalog's one Gen4 drive the two are close for this 8B model, and if_faster
  // recomputes most prefixes.)
  const std::vector<std::string> tiers = {"workload.kv_host_cache=8GB",
                                          "workload.kv_nvme_cache=200GB"};
  auto plus = [&](std::vector<std::string> more) {
    more.insert(more.begin(), tiers.begin(), tiers.end());
    return with(more);
  };
  const auto slow_always = plus({"hardware.nvme.read_gbps=0.05"});
  const auto slow_choose = plus({"hardware.nvme.read_gbps=0.05", "workload.kv_load=if_faster"});
  INFO("TTFT mean: always load " << slow_always.get("ttft_mean_s") << " s, if faster "
                                 << slow_choose.get("ttft_mean_s") << " s");
  CHECK(slow_always.get("kv_hit_nvme_pct") > 0);
  CHECK(slow_choose.get("kv_hit_nvme_pct") == 0);
  CHECK(slow_choose.get("ttft_mean_s") < slow_always.get("ttft_mean_s"));
  const auto fast_always = plus({"hardware.nvme.read_gbps=60"});
  const auto fast_choose = plus({"hardware.nvme.read_gbps=60", "workload.kv_load=if_faster"});
  CHECK(fast_always.get("kv_hit_nvme_pct") > 0);
  CHECK(fast_choose.get("kv_hit_nvme_pct") == fast_always.get("kv_hit_nvme_pct"));
  CHECK(fast_choose.get("ttft_mean_s") == fast_always.get("ttft_mean_s"));
  // Write-back copies a block down when the tier above evicts it, write-through when it is
  // computed. With the tiers full from the start (the cache warm, prefix_stream.hpp), every block
  // leaves DRAM in the end and is written to the drives once either way: the same write volume,
  // later. (Only a run that starts from empty tiers ends with blocks write-back never wrote.)
  const auto wb = with({"workload.kv_host_cache=8GB", "workload.kv_nvme_cache=200GB",
                        "workload.kv_write=write_back"});
  INFO("NVMe writes: write-through " << n.get("kv_nvme_write_bytes") << ", write-back "
                                     << wb.get("kv_nvme_write_bytes"));
  CHECK(wb.get("kv_nvme_write_bytes") == Approx(n.get("kv_nvme_write_bytes")).epsilon(0.1));
  CHECK(wb.get("kv_nvme_write_bytes") != n.get("kv_nvme_write_bytes"));
  // Deterministic.
  const auto n2 = with({"workload.kv_host_cache=8GB", "workload.kv_nvme_cache=200GB"});
  CHECK(n2.get("ttft_p99_s") == n.get("ttft_p99_s"));
  CHECK(n2.get("kv_hit_nvme_pct") == n.get("kv_hit_nvme_pct"));
}

}  // namespace tiersim

namespace tiersim::sim_workloads_serving_prefix_stream_test {

TEST_CASE("the KV tiers' traffic is its own work in the time breakdown, not the weights'",
          "[workloads][serving][breakdown]") {
  // Weights in GPU memory: every byte over the links and the drives is the KV tiers'.
  sim::SimOptions o;
  o.breakdown = true;
  const auto load = [&](std::vector<std::string> sets) {
    sets.push_back("workload.gpu_memory_utilization=0.26");
    return sim::simulate(test::load_yaml(kSessionsYaml, std::move(sets)), o);
  };
  const sim::RunResult r = load({"workload.kv_host_cache=8GB", "workload.kv_nvme_cache=200GB"});
  REQUIRE(r.fits);
  const auto busy = [&](sim::Activity a) {
    double s = 0;
    for (const sim::PhaseTime& p : r.phases)
      if (!p.waiting && p.activity == a) s += p.busy_s;
    return s;
  };
  const auto resource_busy = [&](const std::string& name) {
    for (const sim::ResourceUsage& u : r.utilization)
      if (u.name == name) return u.busy_s;
    return 0.0;
  };
  CHECK(busy(sim::activity::kKvLoadHost) > 0);
  CHECK(busy(sim::activity::kKvLoadNvme) > 0);
  CHECK(busy(sim::activity::kKvStoreHost) > 0);
  CHECK(busy(sim::activity::kKvStoreNvme) > 0);
  CHECK(busy(sim::activity::kWeightsNvme) == 0);
  CHECK(busy(sim::activity::kWeightsCpu) == 0);
  CHECK(busy(sim::activity::kKvToHost) == 0);
  // Stores to host DRAM are the GPU-to-host link's only work; loads and NVMe stores are all of
  // the drives' and the host-to-GPU link's.
  CHECK(busy(sim::activity::kKvStoreHost) == Approx(resource_busy("pcie-d2h")));
  CHECK(busy(sim::activity::kKvLoadHost) + busy(sim::activity::kKvLoadNvme) +
            busy(sim::activity::kKvStoreNvme) ==
        Approx(resource_busy("pcie-h2d") + resource_busy("nvme")));
  // The phases still add up to the run.
  double path = 0;
  for (const sim::PhaseTime& p : r.phases) path += p.path_s;
  CHECK(path == Approx(r.get("total_s")).epsilon(1e-9));
  // Without the lower tiers, none of it.
  const sim::RunResult gpu = load({});
  for (const sim::PhaseTime& p : gpu.phases)
    CHECK_FALSE((p.activity == sim::activity::kKvLoadHost ||
                 p.activity == sim::activity::kKvLoadNvme ||
                 p.activity == sim::activity::kKvStoreHost ||
                 p.activity == sim::activity::kKvStoreNvme));
}

TEST_CASE("a Mooncake trace and a conversation CSV drive prefix caching end to end",
          "[workloads][serving]") {
  test::TempDir dir;
  write_shared_prefix_trace(dir.file("m.jsonl"));
  const std::string yaml = R"(
name: mooncake-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload: {kind: serving}
)";
  const auto on = sim::simulate(test::load_yaml(yaml, {"workload.trace=" + dir.file("m.jsonl")}));
  // The first request finds nothing; the other nine find both shared blocks of their two
  // cacheable ones (1499 tokens hold two full 512-token blocks).
  CHECK(on.get("kv_prefix_lookup_blocks") == 20);
  CHECK(on.get("kv_hit_gpu_pct") == Approx(90));
  CHECK(on.get("kv_recompute_avoided_tokens") == 9 * 1024);
  const auto off = sim::simulate(test::load_yaml(
      yaml, {"workload.trace=" + dir.file("m.jsonl"), "workload.prefix_caching=false"}));
  CHECK(on.get("ttft_mean_s") < off.get("ttft_mean_s"));

  write(dir.file("c.csv"), "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
                           "a,1,0,600,100\n"
                           "a,2,5,800,100\n");
  const auto conv = sim::simulate(test::load_yaml(
      yaml, {"workload.trace=" + dir.file("c.csv"), "workload.prefix_block_tokens=256"}));
  // Turn 2 finds turn 1's history: 700 tokens, two full blocks of 256; its 799 cacheable tokens
  // span three blocks, the third not computed before.
  CHECK(conv.get("kv_prefix_lookup_blocks") == 2 + 3);
  CHECK(conv.get("kv_recompute_avoided_tokens") == 512);
}

TEST_CASE("without GPU prefix caching a repeated prompt is loaded from the DRAM tier",
          "[workloads][serving]") {
  // vLLM's KV offloading connector with GPU prefix caching off (its published single-request
  // benchmark): the second, identical prompt finds every block but the last in host DRAM.
  test::TempDir dir;
  write(dir.file("c.csv"), "conversation_id,turn,arrival_s,prompt_tokens,output_tokens\n"
                           "p,1,0,7999,1\n"
                           "p,2,30,8000,1\n");
  const std::string yaml = R"(
name: offload-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3.1-8b}
workload: {kind: serving, scheduler: chunked, token_budget: 16384, block_tokens: 16,
           prefix_block_tokens: 16, kv_host_cache: 20GB}
)";
  const std::string trace = "workload.trace=" + dir.file("c.csv");
  const auto gpu = sim::simulate(test::load_yaml(yaml, {trace}));
  const auto dram =
      sim::simulate(test::load_yaml(yaml, {trace, "workload.gpu_prefix_caching=false"}));
  // With the GPU pool caching, turn 2's 499 blocks (of (8000 - 1) / 16) come from the GPU.
  CHECK(gpu.get("kv_hit_gpu_pct") == Approx(100.0 * 499 / (499 + 499)));
  CHECK(gpu.get("kv_hit_host_pct") == 0);
  // Without, from host DRAM: 499 blocks of 16 tokens x 128 KiB (Llama-3.1-8B bf16) over PCIe.
  CHECK(dram.get("kv_hit_gpu_pct") == 0);
  CHECK(dram.get("kv_host_read_bytes") == 499.0 * 16 * 131072);
  // Turn 1 computes the whole prompt either way; turn 2 waits for the copy when it loads.
  CHECK(dram.get("ttft_prefix_miss_mean_s") == gpu.get("ttft_prefix_miss_mean_s"));
  // One pinned copy per block: the catalog's pcie_h2d_gbps of the H100 SXM and its fixed cost
  // per copy (pcie_copy_overhead_us).
  const double copy_s = 499 * 8.4e-6 + 499.0 * 16 * 131072 / 55e9;
  CHECK(dram.get("ttft_prefix_hit_mean_s") - gpu.get("ttft_prefix_hit_mean_s") ==
        Approx(copy_s).epsilon(0.01));
  CHECK(dram.get("ttft_prefix_hit_mean_s") < dram.get("ttft_prefix_miss_mean_s") / 5);
  // No tier left to cache in: an error naming the key.
  try {
    sim::simulate(test::load_yaml(
        yaml, {trace, "workload.gpu_prefix_caching=false", "workload.kv_host_cache=0"}));
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("workload.gpu_prefix_caching") != std::string::npos);
  }
}

TEST_CASE("chunked prefill starts after the cached prefix", "[workloads][serving]") {
  const auto off = run({"workload.scheduler=chunked", "workload.prefix_caching=false"});
  const auto on = run({"workload.scheduler=chunked"});
  CHECK(on.get("kv_hit_pct") > 30);
  CHECK(on.get("ttft_mean_s") < off.get("ttft_mean_s"));
}

}  // namespace tiersim

namespace tiersim::sim_workloads_serving_prefix_stream_test {

TEST_CASE("a conversation's turns go to the replica that holds its history",
          "[workloads][serving]") {
  // One replica at 4 turns/s against two at 8: with each session kept on one replica, every
  // replica sees the same traffic and finds the same share of its prefixes. Round-robin dispatch
  // would send a conversation's turns to both, and each would miss the history the other holds.
  const auto one = run({});
  const auto two = run({"hardware.gpu.count=2", "workload.arrival_rate=8", "workload.requests=1200"});
  CHECK(two.get("replicas") == 2);
  INFO("hit %: one replica " << one.get("kv_hit_pct") << ", two " << two.get("kv_hit_pct"));
  CHECK(two.get("kv_hit_pct") == Approx(one.get("kv_hit_pct")).margin(5));
}

}  // namespace tiersim

namespace tiersim::sim_workloads_serving_prefix_stream_test {

TEST_CASE("synthetic sessions are stationary from the first request", "[workloads][serving]") {
  // The multi-turn scenarios' sessions (6 turns, 5 minutes apart, 4 turns/s): a session lives
  // 30 minutes on average, longer than the whole run of 6,000 requests (25 minutes). Started
  // together with the run, the sessions would be few at first, mostly in their first turns (the
  // turn rate a fraction of 4/s, prompts short); from a stationary start, the first five minutes
  // look like the last five.
  const Scenario s = test::load_yaml(kSessionsYaml, {"workload.requests=6000", "workload.turns=6",
                                                     "workload.think_time=300s"});
  std::vector<sim::Request> past;
  const auto r = sim::synthetic_sessions(s.serving, 0, &past);
  REQUIRE(r.size() == 6000);
  CHECK(r.front().arrival_s >= 0);
  const double end_s = r.back().arrival_s;
  struct Window {
    long requests = 0;
    double prompt_sum = 0;
    std::set<std::uint64_t> sessions;
  } first, last;
  for (const auto& q : r) {
    Window* w = q.arrival_s < 300 ? &first : q.arrival_s >= end_s - 300 ? &last : nullptr;
    if (!w) continue;
    ++w->requests;
    w->prompt_sum += q.prompt_tokens;
    w->sessions.insert(q.session);
  }
  INFO("first 300 s: " << first.requests << " requests, " << first.sessions.size()
                       << " sessions; last 300 s: " << last.requests << ", "
                       << last.sessions.size());
  // 4 turns/s over 300 s = 1,200 from the start (sampling noise about 3%).
  CHECK(first.requests == Approx(1200).epsilon(0.1));
  CHECK(double(first.sessions.size()) == Approx(double(last.sessions.size())).epsilon(0.1));
  CHECK(first.prompt_sum / double(first.requests) ==
        Approx(last.prompt_sum / double(last.requests)).epsilon(0.1));
  // The turns before time 0, which warm the cache: in arrival order, all before the run, reaching
  // back a burn-in of ten session lifetimes.
  REQUIRE(!past.empty());
  CHECK(past.back().arrival_s < 0);
  CHECK(std::is_sorted(past.begin(), past.end(), [](const sim::Request& a, const sim::Request& b) {
    return a.arrival_s < b.arrival_s;
  }));
  CHECK(past.front().arrival_s >= -sim::session_burn_in_s(s.serving));
  CHECK(sim::session_burn_in_s(s.serving) == Approx(10 * 300 * 6));
  // Keeping them or not changes nothing in the stream.
  const auto again = sim::synthetic_sessions(s.serving, 0);
  bool same = again.size() == r.size();
  for (std::size_t i = 0; same && i < r.size(); ++i)
    same = again[i].arrival_s == r[i].arrival_s && again[i].block_hashes == r[i].block_hashes;
  CHECK(same);
}

TEST_CASE("think_time_min is a floor under a session's gaps and keeps their mean",
          "[workloads][serving]") {
  // Gaps between consecutive turns of each session: a plain exponential has many shorter than
  // 10 s (1 - exp(-10/30) = 28%); with a 10 s floor none is, and the mean stays 30 s.
  const auto gaps = [](const std::vector<std::string>& sets) {
    const Scenario s = test::load_yaml(
        kSessionsYaml, [&] {
          std::vector<std::string> v{"workload.requests=4000", "workload.turns=20",
                                     "workload.think_time=30s"};
          v.insert(v.end(), sets.begin(), sets.end());
          return v;
        }());
    std::map<std::uint64_t, double> last;
    std::vector<double> out;
    for (const auto& r : sim::synthetic_sessions(s.serving, 0)) {
      const auto it = last.find(r.session);
      if (it != last.end()) out.push_back(r.arrival_s - it->second);
      last[r.session] = r.arrival_s;
    }
    return out;
  };
  const auto plain = gaps({});
  const auto floored = gaps({"workload.think_time_min=10s"});
  REQUIRE(plain.size() > 2000);
  REQUIRE(floored.size() > 2000);
  const auto short_share = [](const std::vector<double>& g) {
    return double(std::count_if(g.begin(), g.end(), [](double x) { return x < 10; })) /
           double(g.size());
  };
  const auto mean = [](const std::vector<double>& g) {
    double m = 0;
    for (double x : g) m += x / double(g.size());
    return m;
  };
  CHECK(short_share(plain) == Approx(1 - std::exp(-10.0 / 30)).margin(0.03));
  CHECK(short_share(floored) == 0);
  CHECK(*std::min_element(floored.begin(), floored.end()) >= 10);
  CHECK(mean(plain) == Approx(30).epsilon(0.06));
  CHECK(mean(floored) == Approx(30).epsilon(0.06));
  // A floor equal to the mean: every gap is the mean.
  for (double g : gaps({"workload.think_time_min=30s"})) CHECK(g == Approx(30));
}

TEST_CASE("a think_time_min above think_time names the file, the line and the key",
          "[workloads][serving]") {
  const std::string e = error_of(
      [] { test::load_yaml(std::string(kSessionsYaml) + "  think_time_min: 40s\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.think_time_min"));
  CHECK_THAT(e, Catch::Contains("must not exceed workload.think_time"));
  CHECK_THAT(error_of([] { test::load_yaml(kSessionsYaml, {"workload.think_time_min=-1s"}); }),
             Catch::Contains("workload.think_time_min"));
}

TEST_CASE("a short multi-turn run starts from a warm cache", "[workloads][serving]") {
  // The first 150 requests (under a minute at 4/s) already find the histories of sessions that
  // began before the run: their hit rate is that of a run twenty times as long.
  const auto short_run = run({"workload.requests=150", "workload.warmup_requests=0"});
  const auto long_run = run({"workload.requests=3000"});
  INFO("hit %: 150 requests " << short_run.get("kv_hit_pct") << ", 3000 "
                              << long_run.get("kv_hit_pct"));
  CHECK(short_run.get("kv_hit_pct") == Approx(long_run.get("kv_hit_pct")).margin(5));
}

TEST_CASE("the warm-up is left out of the metrics and reported", "[workloads][serving]") {
  test::TempDir dir;
  write_shared_prefix_trace(dir.file("m.jsonl"));  // only the first request misses
  const std::string yaml = R"(
name: warmup-test
hardware:
  gpu: {model: H100-SXM}
model: {name: llama-3-8b}
workload: {kind: serving}
)";
  const std::string trace = "workload.trace=" + dir.file("m.jsonl");
  // Unset: a twentieth of the requests, none of ten.
  const auto all = sim::simulate(test::load_yaml(yaml, {trace}));
  CHECK(all.get("warmup_requests") == 0);
  CHECK(all.get("requests_measured") == 10);
  CHECK(all.get("kv_hit_gpu_pct") == Approx(90));
  const auto one = sim::simulate(test::load_yaml(yaml, {trace, "workload.warmup_requests=1"}));
  CHECK(one.get("warmup_requests") == 1);
  CHECK(one.get("requests_measured") == 9);
  CHECK(one.get("requests_completed") == 10);  // served all the same
  CHECK(one.get("kv_prefix_lookup_blocks") == 18);
  CHECK(one.get("kv_hit_gpu_pct") == Approx(100));
  CHECK(one.get("kv_recompute_avoided_tokens") == 9 * 1024);
  // The first request, which prefilled its whole prompt, no longer counts in the TTFT.
  CHECK(one.get("ttft_max_s") < all.get("ttft_max_s"));
  // A stream without prefix structure keeps every request unless told otherwise, and says
  // nothing of a warm-up.
  const auto plain = run({"workload.turns=1", "workload.shared_prefixes=0"});
  CHECK_FALSE(plain.has("warmup_requests"));
  // Multi-turn sessions: a twentieth by default.
  const auto sessions = run({});
  CHECK(sessions.get("warmup_requests") == 30);
  CHECK(sessions.get("requests_measured") == 570);
}

TEST_CASE("a bad warm-up names the file, the line and the key", "[workloads][serving]") {
  std::string e =
      error_of([] { test::load_yaml(std::string(kSessionsYaml) + "  warmup_requests: -5\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.warmup_requests"));
  e = error_of([] { test::load_yaml(std::string(kSessionsYaml) + "  warmup_requests: 600\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.warmup_requests"));
  CHECK_THAT(e, Catch::Contains("600"));
  CHECK_THAT(e, Catch::Contains("workload.requests"));
  // A trace shorter than the warm-up: the run says so.
  test::TempDir dir;
  write(dir.file("m.jsonl"),
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0]}\n");
  e = error_of([&] {
    sim::simulate(test::load_yaml("name: t\nhardware:\n  gpu: {model: H100-SXM}\nmodel: {name: "
                                  "llama-3-8b}\nworkload: {kind: serving}\n",
                                  {"workload.trace=" + dir.file("m.jsonl"),
                                   "workload.warmup_requests=5"}));
  });
  CHECK_THAT(e, Catch::Contains("workload.warmup_requests"));
  CHECK_THAT(e, Catch::Contains("1 requests"));
}

}  // namespace tiersim

namespace tiersim::sim_workloads_serving_prefix_stream_test {

TEST_CASE("auto KV tiers: sized from the memory model, shown in the results, errors named",
          "[workloads][serving][kv_tiers]") {
  const std::vector<std::string> small = {"workload.gpu_memory_utilization=0.26"};
  const std::string yaml = std::string(kSessionsYaml) + "  kv_host_cache: auto\n";
  const Scenario s = test::load_yaml(yaml, {"workload.kv_nvme_cache=auto"});
  // The resolved scenario keeps the word: a host with more DRAM gets a larger tier.
  CHECK_THAT(s.resolved_yaml, Catch::Contains("kv_host_cache: auto"));
  CHECK_THAT(s.resolved_yaml, Catch::Contains("kv_nvme_cache: auto"));
  const ServingKvRoom room = serving_kv_room(s, ExecutionModel{});
  REQUIRE(room.tiers.host_bytes > 0);
  REQUIRE(room.tiers.nvme_bytes > 0);
  // The run reports the sizes it used (kv_host_tier_bytes, kv_nvme_tier_bytes, and the memory
  // table's rows) and the tiers catch hits.
  const sim::RunResult r = sim::simulate(
      test::load_yaml(yaml, {"workload.kv_nvme_cache=auto", small[0]}));
  REQUIRE(r.fits);
  CHECK(r.get("kv_host_tier_bytes") == room.tiers.host_bytes);
  CHECK(r.get("kv_nvme_tier_bytes") == room.tiers.nvme_bytes);
  CHECK(r.get("kv_hit_host_pct") > 0);
  bool row = false;
  for (const TierMemory& t : r.memory)
    for (const MemoryItem& i : t.items)
      row = row || (i.what == "kv cache tier (workload.kv_host_cache: auto)" &&
                    i.bytes == room.tiers.host_bytes);
  CHECK(row);

  // A host whose DRAM the OS reserve takes whole: no room, named by file, line and key.
  std::string e = error_of([&] { test::load_yaml(yaml, {"hardware.host.dram_gb=16"}); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_host_cache"));
  CHECK_THAT(e, Catch::Contains("auto leaves no room"));
  CHECK_THAT(e, Catch::Contains("operating system and framework"));
  // auto on NVMe without drives.
  e = error_of([&] {
    test::load_yaml(std::string(kSessionsYaml) + "  kv_nvme_cache: auto\n",
                    {"hardware.nvme.count=0"});
  });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_nvme_cache"));
  CHECK_THAT(e, Catch::Contains("needs drives"));
  // A given tier must fit next to what the run keeps on the host, the OS reserve included: 90 GB
  // on a 100 GB host leaves less than the 16 GB reserve.
  e = error_of([&] {
    test::load_yaml(std::string(kSessionsYaml) + "  kv_host_cache: 90GB\n",
                    {"hardware.host.dram_gb=100"});
  });
  CHECK_THAT(e, Catch::Contains("test.yaml:19: workload.kv_host_cache"));
  CHECK_THAT(e, Catch::Contains("exceeds the 84 GB"));
  // Another word is still an error that says what is expected.
  e = error_of([&] { test::load_yaml(std::string(kSessionsYaml) + "  kv_host_cache: all\n"); });
  CHECK_THAT(e, Catch::Contains("test.yaml:19"));
  CHECK_THAT(e, Catch::Contains("size"));
}

}  // namespace tiersim::sim_workloads_serving_prefix_stream_test
