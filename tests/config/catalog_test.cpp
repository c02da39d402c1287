// The catalogs: every shipped entry is valid and sourced; lookups are case-insensitive and an
// unknown name lists the valid ones; a malformed catalog is a clear error.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "config/spec_fields.hpp"
#include "model/capacity.hpp"
#include "model/errors.hpp"
#include "model/power.hpp"

namespace config_catalog_test {

using namespace tiersim;
using namespace tiersim::config;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

// A scratch catalog folder holding the shipped files, with one of them replaced.
std::string scratch_catalog(const std::string& file, const std::string& text) {
  namespace fs = std::filesystem;
  // CTest runs test cases as parallel processes: the pid keeps their scratch folders apart.
  const fs::path dir = fs::temp_directory_path() /
                       ("tiersim-cat-test-" + std::to_string(::getpid()) + "-" + file);
  fs::remove_all(dir);
  fs::create_directories(dir / "catalog");
  for (const auto& e : fs::directory_iterator(kData + "/catalog"))
    if (e.path().extension() == ".yaml") fs::copy_file(e.path(), dir / "catalog" / e.path().filename());
  // Catalog models may point to config.json files there (models.yaml hf_config).
  fs::copy(kData + "/catalog/hf", dir / "catalog" / "hf");
  std::ofstream(dir / "catalog" / file, std::ios::trunc) << text;
  return dir.string();
}

}  // namespace

TEST_CASE("every catalog file loads, strictly and with sources", "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  REQUIRE_FALSE(c.gpus().empty());
  REQUIRE_FALSE(c.hosts().empty());
  REQUIRE_FALSE(c.drives().empty());
  REQUIRE_FALSE(c.models().empty());
  for (const auto& g : c.gpus()) {
    INFO(g.name);
    CHECK(g.memory_mib > 0);
    CHECK(g.memory_reserved_mib < g.memory_mib);
    CHECK_FALSE(g.memory_label.empty());
    CHECK(g.sm_count > 0);
    CHECK_NOTHROW(gpu_arch_info(g.arch));
    CHECK(g.hbm_gbps > 0);
    CHECK(g.fp16_tflops > 0);
    CHECK(g.sources.count("memory_mib"));
    CHECK(g.sources.count("memory_reserved_mib"));
  }
  for (const auto& d : c.drives()) {
    INFO(d.name);
    CHECK(d.read_gbps > 0);
    CHECK(d.write_gbps > 0);
  }
  for (const auto& m : c.models()) {
    INFO(m.name);
    CHECK(m.layers > 0);
    // A model with its own head width (head_dim: Qwen3, GLM-4.5) need not divide hidden.
    CHECK((m.hidden % m.heads == 0 || m.head_size > 0));
    CHECK(m.kv_heads > 0);
  }
  CHECK(c.dram_price_per_gb().known());
}

TEST_CASE("every catalog entry can be used in a scenario", "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  LoadOptions opts;
  opts.catalog = &c;
  auto scenario = [](const std::string& gpu, const std::string& host, const std::string& drive,
                     const std::string& model) {
    return "name: every\nhardware:\n  gpu: {model: " + gpu + "}\n  host: {model: " + host +
           "}\n  nvme: {model: " + drive + ", count: 2}\nmodel: {name: " + model +
           "}\nworkload: {kind: inference, batch: 4, prompt_tokens: 128, gen_tokens: 8}\n"
           "policy: {weights: nvme, io_path: aio}\n";
  };
  for (const auto& g : c.gpus())
    CHECK_NOTHROW(load_scenario_text(scenario(g.name, "generic-2s-ddr5", c.drives()[0].name,
                                              c.models()[0].name), "gpu " + g.name, opts));
  for (const auto& h : c.hosts())
    CHECK_NOTHROW(load_scenario_text(scenario("H200", h.name, c.drives()[0].name,
                                              c.models()[0].name), "host " + h.name, opts));
  for (const auto& d : c.drives())
    CHECK_NOTHROW(load_scenario_text(scenario("H200", "generic-2s-ddr5", d.name,
                                              c.models()[0].name), "drive " + d.name, opts));
  for (const auto& m : c.models())
    CHECK_NOTHROW(load_scenario_text(scenario("H200", "generic-2s-ddr5", c.drives()[0].name,
                                              m.name), "model " + m.name, opts));
}

TEST_CASE("whole-server hosts load their fans and PSUs; every host passes the power checks",
          "[config][catalog][power]") {
  const Catalog c = Catalog::load(kData);
  const HostSpec& dgx = c.host("dgx-h100");
  CHECK(dgx.psu_count == 6);
  CHECK(dgx.psu_standby == 0);
  CHECK(dgx.psu_rating_w == 3300);
  CHECK(dgx.psu_efficiency == "titanium");
  CHECK(dgx.fan_max_w > 0);
  CHECK(dgx.cooling_design_w > 0);
  CHECK(dgx.sources.count("psu_count"));
  CHECK(c.host("dell-xe9680").psu_rating_w == 2800);
  for (const auto& h : c.hosts()) {
    INFO(h.name);
    Hardware hw;
    hw.gpu = c.gpu("H100-SXM");
    hw.gpu_count = 8;
    hw.host = h;
    CHECK_NOTHROW(check_power_inputs(hw));
    // The idle node at the wall is never below its components.
    CHECK(node_idle_w(hw) >= 8 * hw.gpu.idle_w + h.platform_w);
  }
}

// Issue 33: every shipped host states its DRAM population, so sized DRAM has a floor; a
// fixed-configuration system (DGX) is floored at what it ships with.
TEST_CASE("every catalog host states its DRAM population; its floor fits what it holds",
          "[config][catalog][dram]") {
  const Catalog c = Catalog::load(kData);
  for (const auto& h : c.hosts()) {
    INFO(h.name);
    CHECK(h.memory_channels > 0);
    CHECK(h.dimms_per_channel >= 1);
    CHECK(h.min_dimm_gib > 0);
    for (const char* key : {"memory_channels", "dimms_per_channel", "min_dimm_gib"})
      CHECK(h.sources.count(key));
    const DramPopulation floor = dram_population(0, h);
    CHECK(floor.dimms == h.sockets * h.memory_channels * h.dimms_per_channel);
    // The floor is never more than the catalog's dram_gb, the most the platform holds.
    CHECK_FALSE(floor.capped);
  }
  CHECK(dram_population(0, c.host("generic-2s-ddr5")).dimm_gib == 16);
  CHECK(dram_population(0, c.host("dgx-h100")).dram_gb == c.host("dgx-h100").dram_gb);
  CHECK(dram_population(0, c.host("dgx-2")).dram_gb == c.host("dgx-2").dram_gb);
}

TEST_CASE("every catalog host says, with its source, whether it is a virtual machine",
          "[config][catalog]") {
  // The label picks the rate of host kernel work a hypervisor slows (model/perf.hpp
  // fresh_pages_s), so no host may take it by default.
  const Catalog c = Catalog::load(kData);
  for (const auto& h : c.hosts()) {
    INFO(h.name);
    CHECK(h.sources.count("virtual_machine"));
  }
  for (const char* cloud : {"azure-nc96ads-a100-v4", "azure-nd-h200-v5", "gcp-n1-highmem-32"})
    CHECK(c.host(cloud).virtual_machine);
  for (const char* owned : {"dgx-2", "dgx-h100", "supermicro-sys-521ge-tnrt",
                            "generic-1s-workstation-ddr4", "generic-2s-ddr5"})
    CHECK_FALSE(c.host(owned).virtual_machine);
}

TEST_CASE("catalog names match case-insensitively; unknown names list the valid ones",
          "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  CHECK(c.gpu("h200").name == "H200");
  CHECK(c.model("LLAMA-3-70B").name == "llama-3-70b");
  try {
    (void)c.gpu("A100");
    FAIL("no error");
  } catch (const CatalogError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("unknown GPU 'A100'"));
    CHECK_THAT(msg, Catch::Contains("did you mean 'A100-"));
    CHECK_THAT(msg, Catch::Contains("L40S"));
    CHECK_THAT(msg, Catch::Contains("A100-40GB"));
  }
  CHECK_THROWS_AS(c.drive("no-such-drive"), CatalogError);
  CHECK_FALSE(c.gpu_price("no-such-gpu").known());
  CHECK(c.gpu_price("h200").known());
}

TEST_CASE("a number without a source is rejected", "[config][catalog]") {
  const std::string dir = scratch_catalog(
      "gpus.yaml", "gpus:\n  - name: X1\n    memory_mib: 10\n    hbm_gbps: 100\n"
                   "    fp16_tflops: 10\n    sources:\n      memory_mib: \"datasheet\"\n"
                   "      fp16_tflops: \"datasheet\"\n");
  try {
    (void)Catalog::load(dir);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 4);
    CHECK(e.key_path() == "gpus[0].hbm_gbps");
    CHECK_THAT(e.what(), Catch::Contains("no source given"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a GPU without its generation is told the valid ones", "[config][catalog]") {
  const std::string dir =
      scratch_catalog("gpus.yaml",
                      "gpus:\n  - name: X1\n    memory_mib: 10\n    hbm_gbps: 100\n"
                      "    fp16_tflops: 10\n    sources:\n      memory_mib: \"datasheet\"\n"
                      "      hbm_gbps: \"datasheet\"\n      fp16_tflops: \"datasheet\"\n");
  try {
    (void)Catalog::load(dir);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "gpus[0].arch");
    CHECK_THAT(e.what(), Catch::Contains("missing required key (expected the GPU generation, "
                                         "one of: volta, turing"));
    CHECK_THAT(e.what(), !Catch::Contains("unknown GPU generation ''"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unknown catalog key is rejected with a suggestion", "[config][catalog]") {
  const std::string dir = scratch_catalog(
      "gpus.yaml", "gpus:\n  - name: X1\n    memory_mibb: 10\n");
  CHECK_THROWS_WITH(Catalog::load(dir), Catch::Contains("did you mean 'memory_mib'?"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the built-in catalog snapshot is the shipped catalogs, parsed", "[config][catalog]") {
  const CatalogSnapshot* snap = builtin_catalog_snapshot();
  REQUIRE(snap != nullptr);
  CHECK(Catalog::texts_hash(kData) == snap->texts_hash);
  // load() compares the files with the texts the snapshot was made from, byte for byte.
  CHECK(Catalog::texts(kData) == snap->texts);
  const std::string parsed = Catalog::parse(kData).to_text();
  // load() serves the snapshot for these files; it must hold exactly what parsing gives.
  CHECK(Catalog::load(kData).to_text() == parsed);
  CHECK(Catalog::from_text(parsed, kData + "/catalog").to_text() == parsed);
  const Catalog c = Catalog::load(kData);
  CHECK(c.dir() == kData + "/catalog");
  CHECK(c.gpu("H200").memory_mib == Catalog::parse(kData).gpu("H200").memory_mib);
  CHECK(c.gpu("H200").sources == Catalog::parse(kData).gpu("H200").sources);
}

namespace {
// Every field and source of two entries, as text (field_text is canonical).
template <class T>
void check_same_entry(const T& a, const T& b, const std::vector<SpecField<T>>& fields) {
  INFO(a.name);
  CHECK(a.name == b.name);
  CHECK(a.sources == b.sources);
  for (const auto& f : fields) CHECK(field_text(f, a) == field_text(f, b));
}
}  // namespace

TEST_CASE("the snapshot decodes each entry asked for by name as parsing gives it",
          "[config][catalog]") {
  const Catalog parsed = Catalog::parse(kData);
  // A fresh catalog per lookup: from the snapshot, each entry is decoded at its first use only.
  for (const auto& g : parsed.gpus())
    check_same_entry(Catalog::load(kData).gpu(g.name), g, gpu_fields());
  for (const auto& d : parsed.drives())
    check_same_entry(Catalog::load(kData).drive(d.name), d, drive_fields());
  for (const auto& h : parsed.hosts())
    check_same_entry(Catalog::load(kData).host(h.name), h, host_fields());
  for (const auto& m : parsed.models())
    check_same_entry(Catalog::load(kData).model(m.name), m, llm_fields());

  const Catalog c = Catalog::load(kData);
  // Names are case-insensitive; an entry asked for again is the same object, and stays valid
  // once the whole list is decoded.
  const GpuSpec& h200 = c.gpu("h200");
  CHECK(&h200 == &c.gpu("H200"));
  CHECK(c.gpus().size() == parsed.gpus().size());
  CHECK(h200.name == "H200");
  // An unknown name: the same error, listing the valid names, as from the parsed files.
  for (const std::string name : {"H2000", "nope"}) {
    std::string from_snapshot, from_parse;
    try {
      c.gpu(name);
    } catch (const CatalogError& e) {
      from_snapshot = e.what();
    }
    try {
      parsed.gpu(name);
    } catch (const CatalogError& e) {
      from_parse = e.what();
    }
    CHECK_THAT(from_snapshot, Catch::Contains("valid: "));
    CHECK(from_snapshot == from_parse);
  }
  std::string error;
  try {
    c.model("llama-3-70");
  } catch (const CatalogError& e) {
    error = e.what();
  }
  CHECK_THAT(error, Catch::Contains("did you mean 'llama-3-70b'?"));
}

TEST_CASE("an edited catalog is parsed, not served from the snapshot", "[config][catalog]") {
  std::ifstream in(kData + "/catalog/gpus.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find("  - name: H200\n    memory_mib: 143771\n");
  REQUIRE(at != std::string::npos);
  text.replace(text.find("143771", at), 6, "143772");
  const std::string dir = scratch_catalog("gpus.yaml", text);
  CHECK(Catalog::texts_hash(dir) != Catalog::texts_hash(kData));
  CHECK(Catalog::load(dir).gpu("H200").memory_mib == 143772);
  CHECK(Catalog::load(dir).to_text() == Catalog::parse(dir).to_text());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the snapshot serves a catalog folder exactly when its texts are the snapshot's",
          "[config][catalog]") {
  namespace fs = std::filesystem;
  const CatalogSnapshot* snap = builtin_catalog_snapshot();
  REQUIRE(snap != nullptr);
  CHECK(Catalog::matches_snapshot(kData));
  std::ifstream in(kData + "/catalog/gpus.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  REQUIRE(text.size() > 1);
  std::string edited = text;
  edited[edited.size() / 2] = edited[edited.size() / 2] == 'x' ? 'y' : 'x';  // same size
  // What load() compares piece by piece as it reads, against texts(), which builds the string.
  const auto check = [&](const std::string& dir, bool expected) {
    CHECK(Catalog::matches_snapshot(dir) == expected);
    CHECK((Catalog::texts(dir) == snap->texts) == expected);
    if (expected) CHECK(Catalog::load(dir).to_text() == Catalog::parse(dir).to_text());
  };
  struct Variant {
    const char* what;
    std::string gpus;
    bool expected;
  };
  const Variant variants[] = {
      {"unchanged", text, true},
      {"with a byte order mark (read_input_file strips it)", "\xEF\xBB\xBF" + text, true},
      {"one byte edited", edited, false},
      {"one byte more", text + "\n", false},
      {"one byte less", text.substr(0, text.size() - 1), false},
      {"empty", "", false},
  };
  for (const Variant& v : variants) {
    INFO(v.what);
    const std::string dir = scratch_catalog("gpus.yaml", v.gpus);
    check(dir, v.expected);
    fs::remove_all(dir);
  }
  // The config.json files catalog models may name are part of the texts: one more or one fewer
  // is another catalog.
  std::string dir = scratch_catalog("gpus.yaml", text);
  std::ofstream(fs::path(dir) / "catalog" / "hf" / "extra.json") << "{}";
  check(dir, false);
  fs::remove_all(dir);
  dir = scratch_catalog("gpus.yaml", text);
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "catalog" / "hf"))
    if (e.path().extension() == ".json") {
      fs::remove(e.path());
      break;
    }
  check(dir, false);
  fs::remove_all(dir);
  // A catalog file that cannot be read is parsed, which says why.
  dir = scratch_catalog("gpus.yaml", text);
  fs::remove(fs::path(dir) / "catalog" / "prices.yaml");
  CHECK_FALSE(Catalog::matches_snapshot(dir));
  CHECK_THROWS_AS(Catalog::load(dir), ConfigError);
  fs::remove_all(dir);
}

TEST_CASE("a GPU without its own rate measurement inherits its measured sibling's, visibly",
          "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  const GpuSpec& pcie = c.gpu("A100-80GB");
  const GpuSpec& sxm = c.gpu("A100-SXM4-80GB");
  CHECK(pcie.rates_from == "A100-SXM4-80GB");
  // The sibling's fraction of peak, at this GPU's peak (the same 312 dense TFLOPS here).
  CHECK(pcie.l2_shared_read_gbps == Approx(sxm.l2_shared_read_gbps * pcie.fp16_tflops / sxm.fp16_tflops));
  CHECK_THAT(pcie.sources.at("l2_shared_read_gbps"), Catch::StartsWith("inherited from A100-SXM4-80GB"));
  // GPUs with no measurement of their own and no sibling keep the datasheet peak, unset rates.
  CHECK(c.gpu("B200").fp16_achieved_tflops < 0);
  CHECK(c.gpu("B200").rates_from.empty());

  // Only within a generation, and only from a GPU that measured its own.
  std::ifstream in(kData + "/catalog/gpus.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find("    rates_from: A100-SXM4-80GB\n");
  REQUIRE(at != std::string::npos);
  std::string other = text;
  other.replace(at, std::string("    rates_from: A100-SXM4-80GB\n").size(), "    rates_from: T4\n");
  std::string dir = scratch_catalog("gpus.yaml", other);
  CHECK_THROWS_WITH(Catalog::load(dir), Catch::Contains("rates are inherited within a generation"));
  std::filesystem::remove_all(dir);
  other = text;
  other.replace(at, std::string("    rates_from: A100-SXM4-80GB\n").size(), "    rates_from: A100-80GBX\n");
  dir = scratch_catalog("gpus.yaml", other);
  CHECK_THROWS_WITH(Catalog::load(dir), Catch::Contains("no GPU named 'A100-80GBX'"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a command's catalogs are loaded once, at the first use", "[config][catalog]") {
  const CatalogOnce once(kData);
  const Catalog& a = once.get();
  CHECK(&a == &once.get());
  CHECK(a.to_text() == Catalog::load(kData).to_text());
  // A folder whose catalogs do not load reports the same error at every use.
  const std::string dir = scratch_catalog("gpus.yaml", "gpus:\n  - name: X1\n    memory_mibb: 10\n");
  const CatalogOnce broken(dir);
  CHECK_THROWS_WITH(broken.get(), Catch::Contains("did you mean 'memory_mib'?"));
  CHECK_THROWS_WITH(broken.get(), Catch::Contains("did you mean 'memory_mib'?"));
  std::filesystem::remove_all(dir);
}
namespace {

// Weighted least squares of t = fixed + bytes / rate(direction) over the pinned rows of a
// tools/gpu/copy_bandwidth.cu CSV (memory,direction,bytes,gbps), each row weighted by 1 / its
// time; returns the fixed cost [us]. The derivation the catalog's pcie_copy_overhead_us sources
// describe.
double fitted_copy_overhead_us(const std::string& csv) {
  std::ifstream in(csv);
  REQUIRE(in);
  double n[3][3] = {}, v[3] = {};
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("pinned,", 0) != 0) continue;
    std::stringstream ss(line);
    std::string memory, direction, bytes_text, gbps_text;
    std::getline(ss, memory, ',');
    std::getline(ss, direction, ',');
    std::getline(ss, bytes_text, ',');
    std::getline(ss, gbps_text, ',');
    const double bytes = std::stod(bytes_text), t = bytes / (std::stod(gbps_text) * 1e9);
    const double x[3] = {1.0, direction == "h2d" ? bytes : 0.0, direction == "d2h" ? bytes : 0.0};
    const double w2 = 1.0 / (t * t);
    for (int a = 0; a < 3; ++a) {
      v[a] += w2 * x[a] * t;
      for (int b = 0; b < 3; ++b) n[a][b] += w2 * x[a] * x[b];
    }
    ++rows;
  }
  REQUIRE(rows == 12);
  // Cramer's rule for the fixed cost (the first unknown).
  auto det = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  double m0[3][3];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) m0[a][b] = b == 0 ? v[a] : n[a][b];
  return det(m0) / det(n) * 1e6;
}

}  // namespace

TEST_CASE("the fixed cost per pinned copy is the fit of the project's own copy measurements",
          "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  const std::string tools = std::string(TIERSIM_SOURCE_DIR) + "/tools/gpu/";
  const double h100 = fitted_copy_overhead_us(tools + "h100-copy-bandwidth.csv");
  const double h200 = fitted_copy_overhead_us(tools + "h200-copy-bandwidth.csv");
  CHECK(h100 == Approx(8.44).margin(0.01));
  CHECK(h200 == Approx(7.65).margin(0.01));
  CHECK(c.gpu("H100-SXM").pcie_copy_overhead_us == Approx(h100).margin(0.05));
  CHECK(c.gpu("H200").pcie_copy_overhead_us == Approx(h200).margin(0.05));
  // Hopper boards without a measurement take the H100 SXM's, saying so; no other GPU has one.
  for (const GpuSpec& g : c.gpus()) {
    INFO(g.name);
    if (g.name == "H100-SXM" || g.name == "H200") continue;
    if (g.name == "H100-PCIe" || g.name == "H100-NVL") {
      CHECK(g.pcie_copy_overhead_us == c.gpu("H100-SXM").pcie_copy_overhead_us);
      CHECK(g.sources.at("pcie_copy_overhead_us").find("H100 SXM") != std::string::npos);
    } else {
      CHECK(g.pcie_copy_overhead_us < 0);
    }
  }
}

// Weighted least squares of t = 2MNK / rate + N K bytes / exposed + c M N + fixed over the rows of
// one precision in tools/gpu/gemm_shape_sweep.py CSVs (dtype,m,n,k,ms,tflops), each row weighted
// by 1 / its time: the derivation the catalog's GEMM rate sources describe. Returns {rate
// [TFLOP/s], exposed [GB/s of weight bytes]}.
std::pair<double, double> fitted_gemm_rates(const std::vector<std::string>& csvs,
                                            const std::string& dtype) {
  const double bytes_per_elem = dtype == "fp8" ? 1.0 : 2.0;
  double n[4][5] = {};
  int rows = 0;
  for (const std::string& csv : csvs) {
    std::ifstream in(csv);
    REQUIRE(in);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(dtype + ",", 0) != 0) continue;
      std::stringstream ss(line);
      std::string f[5];
      for (auto& x : f) std::getline(ss, x, ',');
      const double m = std::stod(f[1]), nn = std::stod(f[2]), k = std::stod(f[3]);
      const double t = std::stod(f[4]) * 1e-3;
      const double x[4] = {2.0 * m * nn * k, nn * k, m * nn, 1.0};
      const double w2 = 1.0 / (t * t);
      for (int a = 0; a < 4; ++a) {
        n[a][4] += w2 * x[a] * t;
        for (int b = 0; b < 4; ++b) n[a][b] += w2 * x[a] * x[b];
      }
      ++rows;
    }
  }
  REQUIRE(rows == 280);  // 140 shapes, each in both runs
  // Gauss-Jordan elimination with partial pivoting on the normal equations.
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::abs(n[r][c]) > std::abs(n[p][c])) p = r;
    for (int j = 0; j < 5; ++j) std::swap(n[c][j], n[p][j]);
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = n[r][c] / n[c][c];
      for (int j = c; j < 5; ++j) n[r][j] -= f * n[c][j];
    }
  }
  const double per_flop = n[0][4] / n[0][0], per_weight = n[1][4] / n[1][1];
  return {1.0 / per_flop / 1e12, bytes_per_elem / per_weight / 1e9};
}

// A probe's JSON under tools/gpu/, whole.
std::string probe_json(const std::string& file) {
  std::ifstream in(std::string(TIERSIM_SOURCE_DIR) + "/tools/gpu/" + file);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The number after `"key": ` at the first occurrence of key at or after `from` in a probe's JSON.
double json_number_after(const std::string& text, std::size_t from, const std::string& key) {
  const std::size_t at = text.find("\"" + key + "\": ", from);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + key.size() + 4));
}

// The number after `"key": ` in the entry of a power probe's JSON whose "phase" is `phase`.
double phase_number(const std::string& text, const std::string& phase, const std::string& key) {
  const std::size_t at = text.find("\"phase\": \"" + phase + "\"");
  REQUIRE(at != std::string::npos);
  return json_number_after(text, at, key);
}

// The share of its first, boost-clock rate that a GEMM of the 8192 cube keeps when held at full
// math rate under the board's power limit: tools/gpu/power_probe.py on an H200
// (tools/gpu/h200-2026-11-29-power.json), `phase` "bf16 GEMM 8192^3" or "FP8 GEMM 8192^3".
double power_capped_share(const std::string& phase) {
  const std::string text = probe_json("h200-2026-11-29-power.json");
  // The board at its limit while the phase ran (the probe's power is NVML's, in watts).
  CHECK(phase_number(text, phase, "power_w") > 680);
  return phase_number(text, phase, "sustained_tflops") /
         phase_number(text, phase, "tflops_first_replay");
}

TEST_CASE("the H200's idle and memory power are the power probe's", "[config][catalog]") {
  // tools/gpu/power_probe.py on an H200 (tools/gpu/h200-2026-11-29.md): idle with a context open,
  // and the share of the range above idle (to the 700 W limit) that thin bf16 products streaming
  // their weights draw, the kernels of a decode step.
  const auto phase_power = [](const std::string& file, const std::string& phase) {
    return phase_number(probe_json(file), phase, "power_w");
  };
  const Catalog catalog = Catalog::load(kData);
  const GpuSpec& h200 = catalog.gpu("H200");
  const double idle = phase_power("h200-2026-11-29-power.json", "idle");
  CHECK(h200.idle_w == Approx(idle).margin(0.6));
  CHECK(h200.idle_w == Approx(phase_power("h200-2026-11-29-power.json", "idle after")).margin(0.6));
  const double decode_idle = phase_power("h200-2026-11-29-power-decode.json", "idle");
  const double gemm = phase_power("h200-2026-11-29-power-decode.json",
                                  "bf16 decode GEMM M=16 8192x8192, 16 weights");
  CHECK(h200.memory_power_fraction ==
        Approx((gemm - decode_idle) / (h200.tdp_w - decode_idle)).margin(0.005));
}

TEST_CASE("the H100's GEMM rates are the fit of the project's own shape sweep",
          "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  const std::string tools = std::string(TIERSIM_SOURCE_DIR) + "/tools/gpu/";
  const std::vector<std::string> runs = {tools + "h100-2026-11-27-gemm-shapes.csv",
                                         tools + "h100-2026-11-27-gemm-shapes-rerun.csv"};
  const auto [bf16_rate, bf16_exposed] = fitted_gemm_rates(runs, "bf16");
  const auto [fp8_rate, fp8_exposed] = fitted_gemm_rates(runs, "fp8");
  CHECK(bf16_rate == Approx(729.6).margin(0.1));
  CHECK(bf16_exposed == Approx(5846).margin(1));
  CHECK(fp8_rate == Approx(1321.7).margin(0.1));
  CHECK(fp8_exposed == Approx(8740).margin(1));
  const GpuSpec& h100 = c.gpu("H100-SXM");
  CHECK(h100.fp16_achieved_tflops == Approx(bf16_rate).epsilon(0.001));
  CHECK(h100.gemm_exposed_weight_gbps == Approx(bf16_exposed).epsilon(0.001));
  CHECK(h100.fp8_achieved_tflops == Approx(fp8_rate).epsilon(0.001));
  // The sweep's short products ran at the boost clock; the time model's rates are the board's at
  // its power limit (model/power.hpp). The share of them a product held at full rate keeps under
  // the 700 W limit was measured on an H200, which carries it; the H100 SXM has none measured.
  const GpuSpec& h200 = c.gpu("H200");
  CHECK(h200.fp16_power_limited_share ==
        Approx(power_capped_share("bf16 GEMM 8192^3")).margin(1e-4));
  CHECK(h200.fp8_power_limited_share == Approx(power_capped_share("FP8 GEMM 8192^3")).margin(1e-4));
  CHECK(h100.fp16_power_limited_share < 0);
  CHECK(h100.fp8_power_limited_share < 0);
  CHECK(h100.fp8_gemm_exposed_weight_gbps == Approx(fp8_exposed).epsilon(0.001));
  // Its Hopper siblings inherit them at their share of its peak, saying so; no other GPU has them.
  for (const GpuSpec& g : c.gpus()) {
    INFO(g.name);
    if (g.name == "H100-SXM") continue;
    if (g.name == "H200" || g.name == "H100-PCIe" || g.name == "H100-NVL") {
      const double scale = g.fp16_tflops / h100.fp16_tflops;
      CHECK(g.fp8_achieved_tflops == Approx(h100.fp8_achieved_tflops * scale));
      CHECK(g.gemm_exposed_weight_gbps == Approx(h100.gemm_exposed_weight_gbps * scale));
      CHECK(g.sources.at("fp8_gemm_exposed_weight_gbps").find("inherited from H100-SXM") !=
            std::string::npos);
      // Shares are its own, the H200's measured ones; the others have none.
      CHECK((g.name == "H200") == (g.fp16_power_limited_share > 0));
      CHECK((g.name == "H200") == (g.fp8_power_limited_share > 0));
    } else {
      CHECK(g.fp8_achieved_tflops < 0);
      CHECK(g.gemm_exposed_weight_gbps < 0);
      CHECK(g.fp8_gemm_exposed_weight_gbps < 0);
      CHECK(g.fp16_power_limited_share < 0);
      CHECK(g.fp8_power_limited_share < 0);
    }
  }
}

// Times [ms] of one gemm_shape_sweep.py CSV (dtype,m,n,k,ms,tflops) by "dtype,m,n,k".
std::map<std::string, double> sweep_times(const std::string& csv) {
  std::map<std::string, double> t;
  std::ifstream in(csv);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const std::size_t last = line.rfind(',');
    const std::size_t ms = line.rfind(',', last - 1);
    t[line.substr(0, ms)] = std::stod(line.substr(ms + 1, last - ms - 1));
  }
  return t;
}

TEST_CASE("the H200 inherits the H100's GEMM rates because its own sweep times the same",
          "[config][catalog]") {
  // The H200 is the H100's GH100 die at the same clocks with faster memory: its catalog entry
  // inherits the H100 SXM's fitted GEMM rates (rates_from). tools/gpu/h200-2026-11-29.md ran the
  // same sweep on an H200; shape by shape its times are the H100's, within 5% in the median of
  // each range of token counts of each precision. (Its own refit's exposed-weight rates differ
  // for these near-equal times: the sweep's design determines that term poorly.)
  const std::string tools = std::string(TIERSIM_SOURCE_DIR) + "/tools/gpu/";
  const auto h100 = sweep_times(tools + "h100-2026-11-27-gemm-shapes.csv");
  const auto h200 = sweep_times(tools + "h200-2026-11-29-gemm-shapes.csv");
  REQUIRE(h200.size() == 280);
  for (const std::string dtype : {"bf16", "fp8"})
    for (const auto& [lo, hi] :
         {std::pair{128, 512}, std::pair{1024, 2048}, std::pair{4096, 16384}}) {
      std::vector<double> ratio;
      for (const auto& [key, ms] : h200) {
        if (key.rfind(dtype + ",", 0) != 0) continue;
        const int m = std::stoi(key.substr(dtype.size() + 1));
        if (m < lo || m > hi) continue;
        REQUIRE(h100.count(key) == 1);
        ratio.push_back(ms / h100.at(key));
      }
      REQUIRE(!ratio.empty());
      std::sort(ratio.begin(), ratio.end());
      INFO(dtype << " M " << lo << "-" << hi);
      CHECK(ratio[ratio.size() / 2] == Approx(1.0).margin(0.05));
    }
  CHECK(Catalog::load(kData).gpu("H200").rates_from == "H100-SXM");
}

TEST_CASE("a measured CUDA context is the project's own measurement", "[config][catalog]") {
  const Catalog c = Catalog::load(kData);
  const std::string text = probe_json("h100-2026-11-27-context.json");
  // PyTorch's default lazy module loading: what the process holds outside its tensors once its
  // first GEMM has loaded cuBLAS's kernels.
  const std::size_t lazy = text.find("\"mode\": \"LAZY\"");
  REQUIRE(lazy != std::string::npos);
  const double outside_tensors_mib = json_number_after(text, lazy, "after_gemm_used_mib") -
                                     json_number_after(text, lazy, "after_gemm_torch_reserved_mib");
  CHECK(outside_tensors_mib == 676.0);
  CHECK(c.gpu("H100-SXM").cuda_context_mib == outside_tensors_mib);
  // No other board has a measurement: the rest keep the architecture's model.
  for (const GpuSpec& g : c.gpus()) {
    INFO(g.name);
    if (g.name != "H100-SXM") CHECK(g.cuda_context_mib < 0);
  }
}

}  // namespace config_catalog_test
