// tiersim sweep: simulate every point of a sweep file in parallel and store the results.
//
// Under mpirun (when built with MPI) the points are sharded over the ranks round-robin by index;
// every rank simulates its shard on all its cores and sends each outcome to rank 0, the only
// process that writes the database (one writer, one commit per point: kill -9 of any rank loses at
// most the points in flight, never a committed one, and a re-run skips what is stored).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <deque>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "app/command.hpp"
#include "common/progress.hpp"
#include "config/catalog.hpp"
#include "model/errors.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "study/sweep.hpp"

#ifdef TIERSIM_HAVE_MPI
#include <dlfcn.h>

#include <filesystem>

#include "app/mpi/mpi_ops.hpp"
#endif

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

struct SweepArgs {
  std::string file, db = "tiersim-results.db", data_dir;
  int threads = 0;
  std::size_t limit = 0;
  bool dry_run = false, quiet = false, json = false;
};

int print_summary(const sweep::SweepSummary& s, const std::string& name, const SweepArgs& a) {
  if (a.json) {
    std::cout << reports::json_text(reports::sweep_json(s, name, a.db), 2) << "\n";
  } else {
    std::cout << "sweep " << name << ": " << s.points << " points, " << s.simulated
              << " simulated, " << s.no_fit << " do not fit, " << s.skipped << " already stored, "
              << s.invalid << " invalid; " << s.wall_s << " s; results in " << a.db << " (sweep '"
              << name << "')\n";
    for (const auto& f : s.failures) std::cout << "  invalid: " << f << "\n";
  }
  return s.invalid > 0 ? kExitFailure : kExitOk;
}

#ifdef TIERSIM_HAVE_MPI
// Launched by mpirun/srun? (Initialising MPI in a plain run would be slow or fail in containers.)
bool under_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

constexpr int kTagOutcome = 1;
constexpr int kTagDone = 2;

// The MPI module (app/mpi/tiersim_mpi.cpp) beside the program. RTLD_GLOBAL: Open MPI's own
// plugins, which it dlopens in turn, resolve symbols of libmpi.
const TiersimMpiOps& load_mpi_ops() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path =
      ec ? std::string("tiersim-mpi.so") : (exe.parent_path() / "tiersim-mpi.so").string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw Error("tiersim sweep runs under an MPI launcher, but its MPI module could not be "
                "loaded (" + std::string(dlerror()) +
                "); it is built beside the program when Open MPI (libopenmpi-dev) is installed. "
                "Run without mpirun to use one process.");
  using Entry = const TiersimMpiOps* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "tiersim_mpi_ops"));
  const TiersimMpiOps* ops = entry ? entry() : nullptr;
  if (!ops || ops->version != TIERSIM_MPI_OPS_VERSION)
    throw Error("the MPI module " + path + " is from another tiersim build; rebuild tiersim");
  return *ops;  // the module stays loaded for the life of the process
}

void send_text(const TiersimMpiOps& mpi, const std::string& text, int dest, int tag) {
  mpi.send(text.data(), static_cast<int>(text.size()), dest, tag);
}

int run_mpi(const SweepArgs& a, const sweep::SweepSpec& spec, const config::Catalog& catalog) {
  const TiersimMpiOps& mpi = load_mpi_ops();
  int rank = 0, size = 1;
  mpi.init(&rank, &size);
  const double t0 = monotonic_s();
  const std::size_t n = spec.space.point_count();
  int rc = kExitOk;
  try {
    // Every rank checks (deterministically, the same answer everywhere) so that a bad file makes
    // all ranks fail instead of leaving rank 0 waiting.
    sweep::check_axis_values(spec.space, catalog);
    std::unique_ptr<sweep::SweepStore> store;
    std::string done_text;
    if (rank == 0) {
      store = std::make_unique<sweep::SweepStore>(a.db);
      store->begin_sweep(spec, n, TIERSIM_VERSION);
      for (const auto& h : store->done_hashes(spec.name)) done_text += h + "\n";
    }
    // The stored hashes go to every rank so each skips its own finished points.
    auto len = static_cast<unsigned long long>(done_text.size());
    mpi.bcast_length(&len, 0);
    done_text.resize(len);
    mpi.bcast_bytes(done_text.data(), static_cast<int>(len), 0);
    std::unordered_set<std::string> done;
    std::istringstream lines(done_text);
    for (std::string h; std::getline(lines, h);) done.insert(h);

    // This rank's points: rank, rank + size, ... (generated as taken, never allocated up front).
    const auto stride = static_cast<std::size_t>(size), first = static_cast<std::size_t>(rank);
    const sweep::PointIndices mine{first, stride, first < n ? (n - first + stride - 1) / stride : 0};
    sweep::RunOptions opts;
    opts.threads = a.threads;
    opts.done = [&done](const std::string& h) { return done.count(h) > 0; };

    if (rank != 0) {
      // Only this (main) thread talks MPI: the sink runs here.
      sweep::run_points(spec.space, mine, catalog, opts, [&](sweep::Outcome&& o) {
        send_text(mpi, sweep::encode_outcome(o), 0, kTagOutcome);
      });
      send_text(mpi, "", 0, kTagDone);
    } else {
      // The local shard runs on a helper thread; the main thread is the one writer and the only
      // MPI caller, serving local and remote outcomes as they come.
      std::mutex mu;
      std::deque<sweep::Outcome> local;
      bool local_done = false;
      std::exception_ptr local_failure;
      std::thread shard([&] {
        try {
          sweep::run_points(spec.space, mine, catalog, opts, [&](sweep::Outcome&& o) {
            std::lock_guard lock(mu);
            local.push_back(std::move(o));
          });
        } catch (...) {
          local_failure = std::current_exception();
        }
        std::lock_guard lock(mu);
        local_done = true;
      });
      sweep::SweepSummary sum;
      sum.points = n;
      sweep::Progress bar(std::cerr, "sweep " + spec.name + " (" + std::to_string(size) + " ranks)",
                          n, !a.quiet && isatty(STDERR_FILENO));
      auto record = [&](const sweep::Outcome& o) {
        store->save(o, spec.name, TIERSIM_VERSION);
        switch (o.status) {
          case sweep::Status::kSimulated: ++sum.simulated; break;
          case sweep::Status::kNoFit: ++sum.no_fit; break;
          case sweep::Status::kSkipped: ++sum.skipped; break;
          case sweep::Status::kInvalid:
            ++sum.invalid;
            if (sum.failures.size() < 5) sum.failures.push_back(o.point.label + ": " + o.error);
            break;
        }
        if (!a.quiet) bar.add(o.status);
      };
      int ranks_done = 0;
      for (;;) {
        bool idle = true;
        int source = 0, tag = 0, len = 0;
        if (mpi.probe(&source, &tag, &len)) {
          idle = false;
          std::string text(static_cast<std::size_t>(len), '\0');
          mpi.recv(text.data(), len, source, tag);
          if (tag == kTagDone) {
            ++ranks_done;
          } else {
            record(sweep::decode_outcome(text, spec.space, catalog));
          }
        }
        std::deque<sweep::Outcome> batch;
        bool finished_local;
        {
          std::lock_guard lock(mu);
          batch.swap(local);
          finished_local = local_done;
        }
        for (const auto& o : batch) record(o);
        if (!batch.empty()) idle = false;
        if (finished_local && batch.empty() && ranks_done == size - 1) break;
        if (idle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      shard.join();
      if (local_failure) std::rethrow_exception(local_failure);
      if (!a.quiet) bar.finish();
      store->finish_sweep(spec.name);
      sum.wall_s = monotonic_s() - t0;
      rc = print_summary(sum, spec.name, a);
    }
  } catch (const std::exception& e) {
    std::cerr << "tiersim sweep (rank " << rank << "): error: " << e.what() << "\n";
    mpi.abort_all(kExitUsage);
  }
  mpi.finalize();
  return rc;
}
#endif

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim sweep SWEEP.yaml [options]\n\n"
      "Simulates every point of a sweep (a base scenario and axes over scenario keys; format in\n"
      "scenarios/sweeps/README.md) on all cores and stores each result in the results database\n"
      "under the sweep's name, keyed by the resolved scenario's hash. A re-run (or a run resumed\n"
      "after being killed) simulates only the points not stored yet. Under `mpirun -np N` the\n"
      "points are sharded over the ranks and rank 0 writes the database.\n\n"
      "options");
  SweepArgs a;
  opts.add_options()("help,h", "show this help")(
      "db", po::value<std::string>(&a.db)->default_value(a.db), "results database (SQLite)")(
      "threads,j", po::value<int>(&a.threads)->default_value(0),
      "simulation threads (0 = every hardware thread)")(
      "limit", po::value<std::size_t>(&a.limit)->default_value(0),
      "stop after storing this many new points (0 = all), as if interrupted")(
      "dry-run", "list the points (and check the file) without simulating")(
      "quiet,q", "no progress on stderr")(
      "json", "print the summary as one JSON object (points, simulated, no_fit, skipped, "
              "invalid, failures, db)")(
      "data-dir", po::value<std::string>(&a.data_dir),
      kDataDirHelp);
  po::options_description hidden;
  hidden.add_options()("sweep", po::value<std::string>(&a.file));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "sweep", 1);
  if (vm.count("help")) {
#ifdef TIERSIM_HAVE_MPI
    std::cout << "MPI: enabled (under mpirun the points are sharded over the ranks)\n\n";
#else
    std::cout << "MPI: disabled (built without Open MPI)\n\n";
#endif
    std::cout << opts << "\nexamples:\n  tiersim sweep scenarios/sweeps/llama3-70b-drives.yaml --db tiersim-results.db\n"
                         "  mpirun -np 4 tiersim sweep scenarios/sweeps/llama3-70b-drives.yaml --db tiersim-results.db\n";
    return kExitOk;
  }
  if (a.file.empty()) throw Error("missing SWEEP.yaml (see tiersim sweep --help)");
  a.dry_run = vm.count("dry-run") > 0;
  a.quiet = vm.count("quiet") > 0;
  a.json = vm.count("json") > 0;

  const sweep::SweepSpec spec = sweep::parse_sweep_file(a.file);
  const config::Catalog catalog = config::Catalog::load(a.data_dir);
  if (a.dry_run) {
    sweep::check_axis_values(spec.space, catalog);
    const std::size_t n = spec.space.point_count();
    std::cout << "sweep " << spec.name << ": " << n << " points over " << spec.space.axes.size()
              << " axes (base " << spec.space.base_path << ")\n";
    for (std::size_t i = 0; i < n; ++i) std::cout << "  " << i << ": " << sweep::point_at(spec.space, i).label << "\n";
    return kExitOk;
  }
#ifdef TIERSIM_HAVE_MPI
  if (under_mpi_launcher()) {
    if (a.limit > 0) throw Error("--limit is not supported under mpirun");
    return run_mpi(a, spec, catalog);
  }
#endif
  sweep::SweepStore store(a.db);
  sweep::RunOptions ro;
  ro.threads = a.threads;
  // Progress is a self-overwriting line on a terminal, plain lines in a log.
  ro.progress_tty = isatty(STDERR_FILENO) != 0;
  const auto sum = sweep::run_sweep(spec, store, catalog, ro, TIERSIM_VERSION,
                                    a.quiet ? nullptr : &std::cerr, a.limit);
  return print_summary(sum, spec.name, a);
}

}  // namespace tiersim::app
