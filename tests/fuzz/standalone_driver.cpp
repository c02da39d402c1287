// A libFuzzer-free driver for the fuzz target (tests/fuzz/fuzz_config.cpp), so that the normal GCC
// build can run it: it loads a seed corpus, runs every seed, then mutates seeds with a seeded
// pseudo-random generator until a time or run budget is spent. There is no coverage feedback; a
// mutant that some reader accepts joins the corpus instead. A crash, a sanitizer report or an
// unexpected exception ends the run with the input saved as fuzz-crash-<hash>.yaml in the working
// directory (or --artifacts DIR) and printed to stderr.
//
//   tiersim_fuzz_<target> [--seconds N] [--runs N] [--seed N] [--timeout S] [--ext EXT]...
//                         [--artifacts DIR] PATH...
//
// PATH is a file or a folder (searched recursively for files ending in one of the --ext
// extensions; default: yaml). An input that runs longer than --timeout seconds (default 10) is a
// finding too (a hang), saved like a crash. With --runs the inputs are exactly
// reproducible for a given --seed; with --seconds, the same sequence is cut at a different point.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

namespace fs = std::filesystem;

// YAML syntax and values the readers treat specially; inserting them reaches more branches than
// random bytes do.
const char* const kTokens[] = {
    ": ", "- ", "\n", "\n  ", "  ", "{", "}", "[", "]", ", ", "#", "&a ", "*a", "<<: *a", "!!str ",
    "!!int ", "!!map ", "? ", "---\n", "...\n", "|\n  ", ">\n  ", "\"", "'", "~", "null", "true",
    "false", "0", "-1", "1e308", "-1e308", "1e-320", ".nan", ".inf", "-.inf", "nan", "inf",
    "4294967296", "9223372036854775808", "2147483648", "0x10", "0o7", "1_000", "-0", "0.5",
    "{gpu: 0.5, cpu: 0.5}", "[1, 2]", "{from: 1, to: 64, factor: 2}", "{min: 1}", "{}", "[]",
    "\t", "\r\n", "\xef\xbb\xbf", "\xc3\xa9", "\xff", "profile: ",
    // Request traces (CSV): separators, timestamps and their fields at the edges.
    ",", ",,", "\"", "2023-11-16 18:15:", "2024-02-29 ", "2023-02-31 ", "23:59:60", ":nan",
    ".9999999", "+00:00", "-12:00", "+99:99", "Z", "T", "0x1p4", "1e999", "arrival_s",
    "TIMESTAMP", "ContextTokens", "GeneratedTokens", "prompt_tokens", "output_tokens",
};
const char* const kNumbers[] = {"0",    "-1",    "1e308",      "1e-308", ".nan",
                                ".inf", "-.inf", "1e19",       "0.1",    "65536",
                                "-0",   "1.5",   "2147483647", "3",      "1e400"};

struct Options {
  double seconds = 10;
  long long runs = -1;  // -1: until `seconds`
  std::uint64_t seed = 1;
  std::string artifacts = ".";
  unsigned timeout_s = 10;
  std::vector<std::string> extensions;  // with the dot; empty: ".yaml"
  std::vector<std::string> paths;
};

// The input being run, for the crash handlers. Only the driver's one thread writes it.
struct Current {
  std::string data;
  std::string artifacts;
};
Current* g_current = nullptr;  // NOLINT: the signal handlers' only way to the input

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Async-signal-safe enough: open/write/close and a fixed buffer.
void save_current() {
  if (!g_current) return;
  char name[512];
  std::snprintf(name, sizeof name, "%s/fuzz-crash-%016llx.yaml", g_current->artifacts.c_str(),
                static_cast<unsigned long long>(fnv1a(g_current->data)));
  const int fd = ::open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, g_current->data.data(), g_current->data.size());
    (void)ignored;
    ::close(fd);
  }
  const char head[] = "\n==== tiersim fuzz: the failing input, saved as ";
  ssize_t ignored = ::write(2, head, sizeof head - 1);
  ignored = ::write(2, name, std::strlen(name));
  ignored = ::write(2, " ====\n", 6);
  ignored = ::write(2, g_current->data.data(), std::min<std::size_t>(g_current->data.size(), 4096));
  ignored = ::write(2, "\n==== end of input ====\n", 24);
  (void)ignored;
}

// SIGINT or SIGTERM ends a campaign after the current input, with the usual summary line, so an
// interrupted run still reports how many inputs it ran.
volatile std::sig_atomic_t g_stop = 0;  // NOLINT: written only by the signal handler
void on_stop(int) { g_stop = 1; }

void on_signal(int sig) {
  save_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// An input that runs past --timeout: a hang (as the NaN trace timestamps of issue 28 were).
void on_timeout(int) {
  const char msg[] = "\ntiersim fuzz: an input ran past --timeout (a hang)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  save_current();
  std::_Exit(3);
}

void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "tiersim fuzz: %s\nusage: tiersim_fuzz_<target> [--seconds N] [--runs N] "
               "[--seed N] [--timeout S] [--ext EXT]... [--artifacts DIR] PATH...\n",
               message.c_str());
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--runs") o.runs = std::stoll(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--artifacts") o.artifacts = value();
    else if (a == "--timeout") o.timeout_s = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--ext") o.extensions.push_back("." + value());
    else if (!a.empty() && a[0] == '-') usage_error("unknown option " + a);
    else o.paths.push_back(a);
  }
  if (o.paths.empty()) usage_error("no seed corpus given");
  if (o.extensions.empty()) o.extensions = {".yaml"};
  return o;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> load_corpus(const std::vector<std::string>& paths,
                                     const std::vector<std::string>& extensions) {
  std::vector<fs::path> files;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() &&
            std::find(extensions.begin(), extensions.end(), e.path().extension().string()) !=
                extensions.end())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      usage_error("no such file or folder: " + p);
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not stable; the run must be
  std::vector<std::string> corpus;
  for (const auto& f : files) corpus.push_back(read_file(f));
  return corpus;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(s);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  std::string mutate(const std::vector<std::string>& corpus) {
    std::string s = corpus[below(corpus.size())];
    const std::size_t steps = 1 + below(4);
    for (std::size_t i = 0; i < steps; ++i) step(s, corpus);
    if (s.size() > kMaxBytes) s.resize(kMaxBytes);
    return s;
  }

 private:
  static constexpr std::size_t kMaxBytes = 64 * 1024;

  void step(std::string& s, const std::vector<std::string>& corpus) {
    const std::size_t pos = below(s.size() + 1);
    switch (below(10)) {
      case 0:  // flip a bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // a random byte
        if (!s.empty()) s[below(s.size())] = static_cast<char>(below(256));
        break;
      case 2:  // a YAML token
        s.insert(pos, kTokens[below(std::size(kTokens))]);
        break;
      case 3:  // delete a range
        s.erase(pos, 1 + below(16));
        break;
      case 4: {  // duplicate a range
        const std::size_t len = std::min<std::size_t>(1 + below(32), s.size() - std::min(pos, s.size()));
        s.insert(below(s.size() + 1), s.substr(pos, len));
        break;
      }
      case 5: {  // a number becomes an extreme one
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < s.size(); ++i)
          if (std::isdigit(static_cast<unsigned char>(s[i])) &&
              (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))))
            starts.push_back(i);
        if (starts.empty()) break;
        const std::size_t b = starts[below(starts.size())];
        std::size_t e = b;
        while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '.' || s[e] == '-')) ++e;
        s.replace(b, e - b, kNumbers[below(std::size(kNumbers))]);
        break;
      }
      case 6: {  // a line from another seed (carries keys between scenario kinds)
        auto lines = split_lines(s);
        const auto other = split_lines(corpus[below(corpus.size())]);
        if (other.empty()) break;
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(below(lines.size() + 1)), other[below(other.size())]);
        s = join_lines(lines);
        break;
      }
      case 7: {  // drop a line
        auto lines = split_lines(s);
        if (lines.empty()) break;
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(below(lines.size())));
        s = join_lines(lines);
        break;
      }
      case 8: {  // re-indent a line
        auto lines = split_lines(s);
        if (lines.empty()) break;
        auto& l = lines[below(lines.size())];
        if (below(2) && l.rfind("  ", 0) == 0) l.erase(0, 2);
        else l.insert(0, "  ");
        s = join_lines(lines);
        break;
      }
      default: {  // splice: the tail of another seed
        const std::string& other = corpus[below(corpus.size())];
        const std::size_t from = below(other.size() + 1);
        s = s.substr(0, pos) + other.substr(from, below(256));
        break;
      }
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);
  std::vector<std::string> corpus = load_corpus(opt.paths, opt.extensions);
  if (corpus.empty()) usage_error("the seed corpus is empty");
  const std::size_t seeds = corpus.size();

  Current current{"", opt.artifacts};
  g_current = &current;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_signal);
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, on_stop);
  std::signal(SIGALRM, on_timeout);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(save_current);
#endif

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  long long runs = 0, accepted = 0;
  auto run = [&](const std::string& input) {
    current.data = input;
    ::alarm(opt.timeout_s);
    const int n = tiersim::fuzz::run_input(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    ::alarm(0);
    ++runs;
    if (n > 0) ++accepted;
    return n;
  };

  for (std::size_t i = 0; i < seeds; ++i) run(corpus[i]);
  const double seed_s = elapsed_s();

  constexpr std::size_t kMaxCorpus = 4096;
  Mutator m(opt.seed);
  // A long campaign (hours) prints a line a minute to stderr, so that its count survives an
  // interrupted run and a stalled one shows.
  double next_report_s = 60;
  while (!g_stop && (opt.runs >= 0 ? runs < opt.runs : elapsed_s() < opt.seconds)) {
    if ((runs & 255) == 0 && elapsed_s() >= next_report_s) {
      std::fprintf(stderr, "tiersim fuzz: %lld inputs in %.0f s (%.0f exec/s), corpus %zu, no findings\n",
                   runs, elapsed_s(), static_cast<double>(runs) / elapsed_s(), corpus.size());
      next_report_s += 60;
    }
    std::string input = m.mutate(corpus);
    if (run(input) > 0) {
      if (corpus.size() < kMaxCorpus) corpus.push_back(std::move(input));
      else corpus[seeds + m.below(kMaxCorpus - seeds)] = std::move(input);
    }
  }
  g_current = nullptr;
  const double total_s = elapsed_s();
  std::printf(
      "tiersim fuzz: %zu seeds in %.2f s; %lld inputs in %.1f s (%.0f exec/s), %lld accepted by a "
      "reader, corpus %zu; seed %llu; no findings\n",
      seeds, seed_s, runs, total_s, static_cast<double>(runs) / total_s, accepted, corpus.size(),
      static_cast<unsigned long long>(opt.seed));
  return 0;
}
