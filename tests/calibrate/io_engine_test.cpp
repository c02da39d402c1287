#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <optional>
#include <fstream>

#include "calibrate/io_engine.hpp"
#include "calibrate/runner.hpp"
#include "calibrate/target.hpp"
#include "tests/temp_dir.hpp"

namespace calibrate_io_engine_test {

using namespace tiersim::calibrate;

namespace {

// O_DIRECT when the scratch file system allows it (tmpfs may not), buffered otherwise: the
// engine logic under test is the same.
CalibrationFile scratch_file(const tiersim::test::TempDir& dir, std::uint64_t bytes) {
  FileOptions fo;
  fo.region_bytes = bytes;
  fo.limits.reserve_free_bytes = 0;
  try {
    return CalibrationFile::create_in_dir(dir.str(), 0, fo);
  } catch (const DirectIoUnsupported&) {
    WARN("scratch directory does not support O_DIRECT; testing the engine with buffered I/O");
    fo.direct = false;
    return CalibrationFile::create_in_dir(dir.str(), 0, fo);
  }
}

bool uring_available() {
  const std::string why = io_uring_unavailable_reason();
  if (!why.empty()) WARN("skipping io_uring checks: " << why);
  return why.empty();
}

RunLimits short_limits() {
  RunLimits l;
  l.warmup_s = 0.02;
  l.min_s = 0.05;
  l.max_s = 0.2;
  l.window_s = 0.02;
  return l;
}

}  // namespace

TEST_CASE("engines read back what was written, through prepare/submit/reap", "[calibrate][engine]") {
  tiersim::test::TempDir dir;
  auto file = scratch_file(dir, 8 << 20);
  for (EngineKind kind : {EngineKind::io_uring, EngineKind::sync}) {
    if (kind == EngineKind::io_uring && !uring_available()) continue;
    INFO(engine_name(kind));
    AlignedBuffer out(2 * 4096), in(2 * 4096);
    std::memset(out.data(), 0xab, 4096);
    std::memset(static_cast<char*>(out.data()) + 4096, 0xcd, 4096);
    for (IoDirection d : {IoDirection::write, IoDirection::read}) {
      AlignedBuffer& buf = d == IoDirection::write ? out : in;
      EngineSetup setup;
      setup.fd = file.fd();
      setup.direction = d;
      setup.queue_depth = 2;
      setup.buffers = {{buf.data(), 4096}, {static_cast<char*>(buf.data()) + 4096, 4096}};
      auto engine = make_engine(kind, setup);
      CHECK(((engine->caps() & kCapAsync) != 0) == (kind == EngineKind::io_uring));
      for (std::uint32_t s = 0; s < 2; ++s) {
        REQUIRE(engine->prepare({s, file.region_offset_bytes() + s * 4096, 4096, static_cast<char*>(buf.data()) + s * 4096, std::nullopt}));
      }
      REQUIRE(engine->submit(2) == 0);
      IoCompletion c[4];
      unsigned got = 0;
      while (got < 2) {
        const unsigned n = engine->reap(std::span<IoCompletion>(c + got, 4 - got));
        if (n == 0) REQUIRE(engine->submit(1) == 0);
        got += n;
      }
      for (unsigned i = 0; i < 2; ++i) CHECK(c[i].result == 4096);
    }
    CHECK(std::memcmp(in.data(), out.data(), 2 * 4096) == 0);
  }
}

TEST_CASE("run_point measures reads and writes with latency percentiles", "[calibrate][engine]") {
  tiersim::test::TempDir dir;
  auto file = scratch_file(dir, 32 << 20);
  const PointTarget target{file.fd(), file.region_offset_bytes(), file.region_bytes()};
  for (EngineKind kind : {EngineKind::io_uring, EngineKind::sync}) {
    if (kind == EngineKind::io_uring && !uring_available()) continue;
    for (const char* rw : {"randread", "write"}) {
      INFO(engine_name(kind) << " " << rw);
      JobSpec job = parse_rw(rw);
      job.block_bytes = 64 * 1024;
      job.queue_depth = 8;
      job.threads = 2;
      const PointResult r = run_point(kind, {target}, job, short_limits(), nullptr, 1);
      CHECK(r.ios > 0);
      CHECK(r.bytes == r.ios * job.block_bytes);
      CHECK(r.bandwidth_gbps > 0);
      CHECK(r.iops == Approx(r.bandwidth_gbps * 1e9 / job.block_bytes).epsilon(1e-9));
      CHECK(r.lat_p50_us > 0);
      CHECK(r.lat_p50_us <= r.lat_p90_us);
      CHECK(r.lat_p90_us <= r.lat_p99_us);
      CHECK(r.lat_p99_us <= r.lat_p999_us);
      CHECK(r.lat_p999_us <= r.lat_max_us);
      CHECK(r.effective_queue_depth == (kind == EngineKind::sync ? 1u : 8u));
    }
  }
}

TEST_CASE("run_point reports I/O errors by errno", "[calibrate][engine]") {
  if (!uring_available()) return;
  tiersim::test::TempDir dir;
  // A read-only descriptor: every write completes with -EBADF, which must become an IoError.
  const std::string path = dir.file("ro.dat");
  { std::ofstream(path) << std::string(1 << 20, 'x'); }
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  JobSpec job = parse_rw("write");
  job.block_bytes = 4096;
  job.queue_depth = 4;
  try {
    run_point(EngineKind::io_uring, {{fd, 0, 1 << 20}}, job, short_limits(), nullptr, 1);
    FAIL("no error");
  } catch (const tiersim::IoError& e) {
    CHECK(std::string(e.what()).find("errno " + std::to_string(EBADF)) != std::string::npos);
  }
  ::close(fd);
}

TEST_CASE("parse_rw and engine names", "[calibrate][engine]") {
  CHECK(parse_rw("randwrite").direction == IoDirection::write);
  CHECK(parse_rw("randwrite").pattern == Pattern::random);
  CHECK(parse_rw("read").pattern == Pattern::sequential);
  CHECK(rw_name(parse_rw("randread")) == "randread");
  CHECK_THROWS_AS(parse_rw("trim"), tiersim::Error);
  CHECK(parse_engine("sync") == EngineKind::sync);
  CHECK_THROWS_AS(parse_engine("libaio"), tiersim::Error);
}

TEST_CASE("buffer pages: 4k refuses huge pages, huge rounds to 2 MiB and asks for them",
          "[calibrate][engine]") {
  constexpr std::size_t kHuge = 2u << 20;
  CHECK(parse_buffer_pages("4k") == BufferPages::small);
  CHECK(parse_buffer_pages("huge") == BufferPages::huge);
  CHECK(parse_buffer_pages("auto") == BufferPages::automatic);
  CHECK_THROWS_AS(parse_buffer_pages("1g"), tiersim::Error);
  CHECK(std::string(buffer_pages_name(BufferPages::small)) == "4k");

  // A 256 KiB buffer (4 KiB x QD 64) got 4 KiB pages whatever was wanted before --buffer-pages.
  const AlignedBuffer huge(256u << 10, BufferPages::huge);
  CHECK(huge.size() == kHuge);
  CHECK(reinterpret_cast<std::uintptr_t>(huge.data()) % kHuge == 0);

  // 8 MiB on 4 KiB pages: no huge page under it even where transparent huge pages are "always" on.
  const AlignedBuffer small(8u << 20, BufferPages::small);
  CHECK(small.size() == (8u << 20));
  CHECK(huge_page_fraction(small.data(), small.size()) == 0.0);
}
}  // namespace calibrate_io_engine_test

namespace calibrate_io_engine_test {

TEST_CASE("a request's own direction overrides the engine's", "[calibrate][engine]") {
  tiersim::test::TempDir dir;
  auto file = scratch_file(dir, 8 << 20);
  for (EngineKind kind : {EngineKind::io_uring, EngineKind::sync}) {
    if (kind == EngineKind::io_uring && !uring_available()) continue;
    INFO(engine_name(kind));
    AlignedBuffer buf(2 * 4096);
    std::memset(buf.data(), 0x5a, 4096);
    std::memset(static_cast<char*>(buf.data()) + 4096, 0, 4096);
    EngineSetup setup;
    setup.fd = file.fd();
    setup.direction = IoDirection::read;  // the engine's default; the first request writes
    setup.queue_depth = 2;
    setup.buffers = {{buf.data(), 4096}, {static_cast<char*>(buf.data()) + 4096, 4096}};
    auto engine = make_engine(kind, setup);
    const std::uint64_t at = file.region_offset_bytes() + 8 * 4096;
    IoCompletion c[2];
    IoRequest write{0, at, 4096, buf.data(), IoDirection::write};
    REQUIRE(engine->prepare(write));
    REQUIRE(engine->submit(1) == 0);
    unsigned got = 0;
    while (got < 1) got += engine->reap(std::span<IoCompletion>(c, 1));
    REQUIRE(c[0].result == 4096);
    IoRequest read{1, at, 4096, static_cast<char*>(buf.data()) + 4096, std::nullopt};
    REQUIRE(engine->prepare(read));
    REQUIRE(engine->submit(1) == 0);
    got = 0;
    while (got < 1) got += engine->reap(std::span<IoCompletion>(c, 1));
    REQUIRE(c[0].result == 4096);
    CHECK(std::memcmp(buf.data(), static_cast<char*>(buf.data()) + 4096, 4096) == 0);
  }
}

TEST_CASE("run_point of a mixed stream splits bandwidth and latency by direction",
          "[calibrate][engine]") {
  tiersim::test::TempDir dir;
  auto file = scratch_file(dir, 32 << 20);
  const PointTarget target{file.fd(), file.region_offset_bytes(), file.region_bytes()};
  for (EngineKind kind : {EngineKind::io_uring, EngineKind::sync}) {
    if (kind == EngineKind::io_uring && !uring_available()) continue;
    INFO(engine_name(kind));
    JobSpec job = parse_rw("randrw70");
    job.block_bytes = 16 * 1024;
    job.queue_depth = 8;
    job.threads = 2;
    RunLimits limits = short_limits();
    limits.stop_on_convergence = false;
    const PointResult r = run_point(kind, {target}, job, limits, nullptr, 3);
    REQUIRE(r.ios >= 200);
    CHECK(r.read.ios + r.write.ios == r.ios);
    CHECK(r.read.bytes + r.write.bytes == r.bytes);
    CHECK(r.read.bytes == r.read.ios * job.block_bytes);
    CHECK(r.read.bandwidth_gbps + r.write.bandwidth_gbps == Approx(r.bandwidth_gbps).epsilon(1e-9));
    // Each request is a read with probability 0.7: the share of reads is within five standard
    // deviations of a binomial draw of that many requests.
    const double n = static_cast<double>(r.ios);
    const double share = static_cast<double>(r.read.ios) / n;
    CHECK(std::abs(share - 0.7) < 5 * std::sqrt(0.7 * 0.3 / n) + 0.02);
    for (const DirectionResult* d : {&r.read, &r.write}) {
      CHECK(d->lat_p50_us > 0);
      CHECK(d->lat_p50_us <= d->lat_p99_us);
      CHECK(d->lat_p99_us <= d->lat_max_us);
    }
  }
}

}  // namespace calibrate_io_engine_test
