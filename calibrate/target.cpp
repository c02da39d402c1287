// Calibration files: creation with an ownership header, random fill, free-space and raw-device
// checks, cleanup.
#include "calibrate/target.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibrate/rng.hpp"
#include "model/hardware.hpp"
#include "store/scratch_files.hpp"
#include "store/sqlite.hpp"

namespace tiersim::calibrate {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "TIERSIM-CALIBRATION-FILE v1\n";
constexpr std::size_t kFillChunkBytes = 4u << 20;

std::string errno_text(int err) { return std::strerror(err); }

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

constexpr char kTokenKey[] = "\ntoken: ";

std::string header_text(const std::string& token, bool keep) {
  std::ostringstream os;
  os << kMagic << "pid: " << ::getpid() << "\nhost: " << host_name()
     << "\ncreated: " << std::time(nullptr) << kTokenKey << token
     << "\nkeep: " << (keep ? "yes" : "no")
     << "\nThis file was created by `tiersim calibrate` for I/O benchmarks and holds only random "
        "data. It is safe to delete.\n";
  return os.str();
}

// 128 random bits, hex: names one created file in its header and in the registry.
std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError("getrandom failed: " + errno_text(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

std::string gib_text(std::uint64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / static_cast<double>(1ull << 30) << " GiB";
  return os.str();
}

bool stopped(const FileOptions& o) { return o.stop != nullptr && o.stop->load(std::memory_order_relaxed); }

// Writes random data over [offset, offset + bytes). Fresh random data per chunk: a drive or a
// hypervisor that compresses or deduplicates must not make the calibration look faster.
void fill_random(int fd, std::uint64_t offset, std::uint64_t bytes, const FileOptions& options,
                 const std::string& path) {
  AlignedBuffer buf(kFillChunkBytes);
  Rng rng(options.seed ^ 0x5eedf111ull);
  std::uint64_t done = 0;
  while (done < bytes) {
    if (stopped(options)) throw Error("interrupted while filling " + path);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kFillChunkBytes, bytes - done));
    rng.fill(buf.data(), n);
    std::size_t put = 0;
    while (put < n) {
      const ssize_t w = ::pwrite(fd, static_cast<char*>(buf.data()) + put, n - put,
                                 static_cast<off_t>(offset + done + put));
      if (w < 0) {
        if (errno == EINTR) {
          if (stopped(options)) throw Error("interrupted while filling " + path);
          continue;
        }
        if (errno == EINVAL && options.direct) {
          throw DirectIoUnsupported("O_DIRECT writes to " + path +
                                    " fail with EINVAL: the file system does not support direct "
                                    "I/O (tmpfs?). Use a directory on a real drive, or --buffered "
                                    "(results then include the page cache).");
        }
        if (errno == ENOSPC) throw IoError("no space left while filling " + path);
        throw IoError("writing " + path + " failed: " + errno_text(errno));
      }
      if (w == 0) throw IoError("writing " + path + " made no progress");
      put += static_cast<std::size_t>(w);
    }
    done += n;
  }
  if (::fdatasync(fd) != 0) throw IoError("fdatasync " + path + " failed: " + errno_text(errno));
}

std::string parent_dir(const std::string& path) {
  fs::path p = fs::absolute(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

// Reads the first bytes of a file without O_DIRECT (any alignment) to look for the header.
std::string read_prefix(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

// The token in a file's ownership header; "" when it has none (or is not tiersim's). Reads
// through O_NOFOLLOW: a symlink has no header of its own.
std::string header_token(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  std::string s(kHeaderBytes, '\0');
  const ssize_t n = ::pread(fd, s.data(), s.size(), 0);
  ::close(fd);
  if (n <= 0) return "";
  s.resize(static_cast<std::size_t>(n));
  if (s.rfind(std::string(kMagic, sizeof kMagic - 1), 0) != 0) return "";
  const auto at = s.find(kTokenKey);
  if (at == std::string::npos) return "";
  const auto begin = at + sizeof kTokenKey - 1;
  return s.substr(begin, s.find('\n', begin) - begin);
}

}  // namespace

bool remove_created_file(const CreatedFile& f) {
  struct stat st {};
  if (f.path.empty() || ::lstat(f.path.c_str(), &st) != 0) return false;
  if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_dev) != f.device ||
      static_cast<std::uint64_t>(st.st_ino) != f.inode)
    return false;
  return ::unlink(f.path.c_str()) == 0;
}

struct FileRegistry::Impl {
  explicit Impl(const std::string& path) : table(path) {}
  store::ScratchFileTable table;
};

FileRegistry::FileRegistry(const std::string& db_path) : impl_(std::make_unique<Impl>(db_path)) {}
FileRegistry::~FileRegistry() = default;

void FileRegistry::add(const CreatedFile& f) {
  // By absolute path: the registry (a --db file) outlives the working folder of the run that
  // wrote it, and a later run from another folder must find the file to remove it.
  std::error_code ec;
  const std::string path = std::filesystem::absolute(f.path, ec).lexically_normal().string();
  if (ec) throw IoError("cannot register scratch file " + f.path + ": " + ec.message());
  store::ScratchFileRow row;
  row.token = f.token;
  row.path = path;
  row.device = f.device;
  row.inode = f.inode;
  row.pid = static_cast<std::int64_t>(::getpid());
  row.host = host_name();
  row.created_at = store::utc_timestamp();
  impl_->table.insert(row);
}

void FileRegistry::forget(const std::string& token) {
  impl_->table.erase(token);
}

int FileRegistry::remove_stale_files() {
  struct Entry {
    CreatedFile file;
    std::int64_t pid;
  };
  std::vector<Entry> stale;
  for (const auto& r : impl_->table.on_host(host_name())) {
    if (r.pid == ::getpid()) continue;
    // Another live process (or one we may not signal) may still use it.
    if (::kill(static_cast<pid_t>(r.pid), 0) == 0 || errno != ESRCH) continue;
    stale.push_back({{r.path, r.token, r.device, r.inode}, r.pid});
  }
  int removed = 0;
  for (const auto& e : stale) {
    if (header_token(e.file.path) == e.file.token && remove_created_file(e.file)) {
      ++removed;
    } else if (!std::filesystem::path(e.file.path).is_absolute()) {
      // A row of an older version, by a path relative to that run's working folder: from here it
      // may name nothing, or another file. Kept, so that a run from that folder still removes it.
      continue;
    }
    forget(e.file.token);
  }
  return removed;
}

void AlignedBuffer::Unmap::operator()(void* p) const {
  if (p != nullptr) ::munmap(p, bytes);
}

const char* buffer_pages_name(BufferPages pages) {
  switch (pages) {
    case BufferPages::automatic:
      return "auto";
    case BufferPages::small:
      return "4k";
    case BufferPages::huge:
      return "huge";
  }
  return "?";
}

BufferPages parse_buffer_pages(const std::string& name) {
  if (name == "auto") return BufferPages::automatic;
  if (name == "4k" || name == "4KiB") return BufferPages::small;
  if (name == "huge" || name == "2MiB") return BufferPages::huge;
  throw Error("unknown buffer pages '" + name + "' (valid: auto, 4k, huge)");
}

double huge_page_fraction(const void* data, std::size_t size_bytes) {
  if (data == nullptr || size_bytes == 0) return 0;
  const auto lo = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t hi = lo + size_bytes;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  std::uint64_t overlap = 0, huge_bytes = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const char c = line.front();
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
      // A mapping's header: "start-end perms offset dev inode [path]", addresses in hex.
      const std::size_t dash = line.find('-');
      const std::uintptr_t start = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(dash + 1), nullptr, 16);
      overlap = start < hi && lo < end ? std::min(end, hi) - std::max(start, lo) : 0;
    } else if (overlap > 0 && line.rfind("AnonHugePages:", 0) == 0) {
      const std::uint64_t kib = std::stoull(line.substr(line.find(':') + 1));
      // A mapping larger than the buffer may hold huge pages outside it: count at most the overlap.
      huge_bytes += std::min<std::uint64_t>(kib * 1024, overlap);
    }
  }
  return std::min(1.0, static_cast<double>(huge_bytes) / static_cast<double>(size_bytes));
}

AlignedBuffer::AlignedBuffer(std::size_t size_bytes, BufferPages pages) {
  // By default buffers of 2 MiB and more sit on transparent huge pages where the kernel allows: a
  // request then spans a few physically contiguous segments instead of one per 4 KiB page, and
  // block queues with a small segment limit (virtio-blk: 254) do not split 1 MiB requests in two.
  constexpr std::size_t kHuge = 2u << 20;
  const bool huge =
      pages == BufferPages::huge || (pages == BufferPages::automatic && size_bytes >= kHuge);
  const std::size_t align = huge ? kHuge : 4096;
  const std::size_t rounded = (std::max<std::size_t>(size_bytes, 1) + align - 1) / align * align;
  // A mapping of its own, not the heap: a heap block may reuse memory that already sits on huge
  // pages (glibc raises its mmap threshold after large frees, so even 8 MiB can come from the
  // heap), and advice given after the first touch does not split them. Over-map by the alignment
  // and trim, so a 2 MiB buffer starts on a 2 MiB boundary.
  const std::size_t mapped = rounded + (align > 4096 ? align : 0);
  void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    throw IoError("cannot allocate " + std::to_string(rounded) + " bytes of aligned I/O buffer: " +
                  errno_text(errno));
  }
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (base + align - 1) / align * align;
  if (start > base) ::munmap(raw, start - base);
  const std::uintptr_t end = start + rounded;
  if (base + mapped > end) ::munmap(reinterpret_cast<void*>(end), base + mapped - end);
  void* p = reinterpret_cast<void*>(start);
  // Hints, before the first touch; failure is harmless (huge_page_fraction tells what the kernel
  // did). NOHUGEPAGE matters when transparent huge pages are "always" on: 4 KiB pages must then
  // be asked for.
  if (huge) ::madvise(p, rounded, MADV_HUGEPAGE);
  if (pages == BufferPages::small) ::madvise(p, rounded, MADV_NOHUGEPAGE);
  data_ = std::unique_ptr<void, Unmap>(p, Unmap{rounded});
  std::memset(p, 0, rounded);  // touch the pages before timing anything
  size_ = rounded;
}

std::uint64_t statvfs_free_bytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) {
    throw IoError("statvfs " + path + " failed: " + errno_text(errno));
  }
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

void check_free_space(const std::string& dir, std::uint64_t need_bytes, const SafetyLimits& limits) {
  const std::uint64_t avail = limits.free_bytes ? limits.free_bytes(dir) : statvfs_free_bytes(dir);
  if (avail < need_bytes || avail - need_bytes < limits.reserve_free_bytes) {
    throw SafetyError("refusing to create " + gib_text(need_bytes) + " of calibration files in " +
                      dir + ": only " + gib_text(avail) + " free and " +
                      gib_text(limits.reserve_free_bytes) +
                      " must remain. Use a smaller --file-size or another directory.");
  }
}

void check_raw_device_consent(const std::string& device, const std::string& confirmation) {
  if (confirmation.empty()) {
    throw SafetyError("refusing to write to raw device " + device +
                      ": this destroys its contents. Name it twice to confirm: --raw-device " +
                      device + " --i-understand-this-destroys " + device);
  }
  std::error_code ec1, ec2;
  const fs::path a = fs::weakly_canonical(device, ec1);
  const fs::path b = fs::weakly_canonical(confirmation, ec2);
  if (confirmation != device && (ec1 || ec2 || a != b)) {
    throw SafetyError("refusing to write to raw device " + device +
                      ": --i-understand-this-destroys names a different device (" + confirmation +
                      ")");
  }
  struct stat st {};
  if (::stat(device.c_str(), &st) != 0) {
    throw SafetyError("raw device " + device + ": " + errno_text(errno));
  }
  if (!S_ISBLK(st.st_mode)) {
    throw SafetyError("refusing --raw-device " + device +
                      ": not a block device (use --target for files and directories)");
  }
}

bool is_own_file(const std::string& path) {
  const std::string prefix = read_prefix(path, sizeof kMagic - 1);
  return prefix == std::string(kMagic, sizeof kMagic - 1);
}

TargetDescription describe_target(const std::string& path) {
  TargetDescription d;
  std::error_code ec;
  const std::string canon = fs::weakly_canonical(path, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::size_t best = 0;
  std::string best_source;
  while (std::getline(in, line)) {
    // id parent major:minor root mount_point options [optional...] - fstype source superoptions
    std::istringstream ls(line);
    std::string id, parent, majmin, root, mount_point, options, field;
    ls >> id >> parent >> majmin >> root >> mount_point >> options;
    while (ls >> field && field != "-") {
    }
    std::string fstype, source;
    ls >> fstype >> source;
    const bool under = canon == mount_point ||
                       (canon.rfind(mount_point, 0) == 0 &&
                        (mount_point == "/" || canon[mount_point.size()] == '/'));
    if (under && mount_point.size() >= best) {
      best = mount_point.size();
      d.mount_point = mount_point;
      d.filesystem = fstype;
      best_source = source;
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    d.filesystem = "raw";
    best_source = path;
  }
  d.device = best_source.empty() ? "unknown" : best_source;
  // The drive's model name, when sysfs has it (NVMe and SCSI do; virtio disks do not).
  const dev_t dev = (::stat(path.c_str(), &st) == 0) ? (S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev) : 0;
  if (dev != 0) {
    const std::string sys = "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
    std::string model;
    for (const char* rel : {"/device/model", "/../device/model"}) {
      std::ifstream m(sys + rel);
      if (m && std::getline(m, model)) break;
    }
    while (!model.empty() && (model.back() == ' ' || model.back() == '\n')) model.pop_back();
    if (!model.empty()) d.device += " (" + model + ")";
  }
  return d;
}

int pcie_generation_from_link_speed(const std::string& text) {
  double gts = 0;
  try {
    gts = std::stod(text);
  } catch (const std::exception&) {
    return 0;  // "Unknown" and the like
  }
  // Transfer rate per lane of each generation (PCI-SIG: 2.5, 5, 8, 16, 32, 64 GT/s).
  const double rates[] = {2.5, 5, 8, 16, 32, 64};
  for (int g = 0; g < 6; ++g) {
    if (std::abs(gts - rates[g]) < 0.01 * rates[g]) return g + 1;
  }
  return 0;
}

InterfaceLink drive_interface(const std::string& path) {
  InterfaceLink link;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return link;
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  std::error_code ec;
  fs::path dir = fs::canonical(
      "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)), ec);
  if (ec) return link;
  auto first_line = [](const fs::path& f) {
    std::ifstream in(f);
    std::string s;
    std::getline(in, s);
    return s;
  };
  for (; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (!fs::exists(dir / "current_link_speed", ec) || !fs::exists(dir / "current_link_width", ec))
      continue;
    const int gen = pcie_generation_from_link_speed(first_line(dir / "current_link_speed"));
    int lanes = 0;
    try {
      lanes = std::stoi(first_line(dir / "current_link_width"));
    } catch (const std::exception&) {
      lanes = 0;
    }
    if (gen > 0 && lanes > 0) {
      link.gbps = pcie_link_gbps(gen, lanes);
      link.description =
          "PCIe Gen" + std::to_string(gen) + " x" + std::to_string(lanes) + " (sysfs)";
    }
    break;  // the nearest device with a link is the drive's own; a root port above it is not
  }
  return link;
}

CalibrationFile::CalibrationFile(CalibrationFile&& o) noexcept
    : fd_(o.fd_),
      path_(std::move(o.path_)),
      created_file_(std::move(o.created_file_)),
      registry_path_(std::move(o.registry_path_)),
      region_offset_bytes_(o.region_offset_bytes_),
      region_bytes_(o.region_bytes_),
      created_(o.created_),
      remove_on_close_(o.remove_on_close_),
      direct_(o.direct_),
      deferred_removal_(o.deferred_removal_) {
  o.fd_ = -1;
  o.remove_on_close_ = false;
}

namespace {

// Removes a created file and its registry entry; never throws (destructors call it).
void remove_and_forget(const CreatedFile& f, const std::string& registry_path) noexcept {
  remove_created_file(f);
  if (registry_path.empty()) return;
  try {
    FileRegistry(registry_path).forget(f.token);
  } catch (...) {  // the entry stays; a later run sees the file gone and forgets it
  }
}

}  // namespace

CalibrationFile::~CalibrationFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!remove_on_close_) return;
  if (deferred_removal_) {
    try {
      deferred_removal_->add(created_file_, registry_path_);
      return;
    } catch (...) {  // out of memory: remove it now rather than leak it
    }
  }
  remove_and_forget(created_file_, registry_path_);
}

DeferredRemoval::~DeferredRemoval() {
  for (const auto& [file, registry] : files_) remove_and_forget(file, registry);
}

void DeferredRemoval::add(const CreatedFile& file, const std::string& registry_path) {
  std::lock_guard lk(mu_);
  files_.emplace_back(file, registry_path);
}

bool DeferredRemoval::holds(const std::string& path) const {
  std::lock_guard lk(mu_);
  return std::any_of(files_.begin(), files_.end(),
                     [&](const auto& f) { return f.first.path == path; });
}

CalibrationFile CalibrationFile::open_owned(const std::string& path, const FileOptions& options) {
  const std::uint64_t total = kRegionOffsetBytes + options.region_bytes;
  CalibrationFile f;
  f.path_ = path;
  f.region_offset_bytes_ = kRegionOffsetBytes;
  f.region_bytes_ = options.region_bytes;
  f.direct_ = options.direct;
  std::uint64_t existing_bytes = 0;

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode) || !is_own_file(path)) {
      throw SafetyError("refusing to use " + path +
                        ": it exists and was not created by tiersim calibrate (no tiersim "
                        "ownership header). Choose another path; tiersim never overwrites files "
                        "it did not create.");
    }
    existing_bytes = static_cast<std::uint64_t>(st.st_size);
    if (existing_bytes < total) check_free_space(parent_dir(path), total - existing_bytes, options.limits);
  } else {
    if (errno != ENOENT) throw IoError("cannot stat " + path + ": " + errno_text(errno));
    check_free_space(parent_dir(path), total, options.limits);
    const int cfd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (cfd < 0) throw IoError("cannot create " + path + ": " + errno_text(errno));
    struct stat created {};
    ::fstat(cfd, &created);
    f.created_ = true;
    f.created_file_ = {path, random_token(), static_cast<std::uint64_t>(created.st_dev),
                       static_cast<std::uint64_t>(created.st_ino)};
    // A --keep file is the user's from the start: never removed, never registered.
    f.remove_on_close_ = !options.keep;
    f.deferred_removal_ = options.deferred_removal;
    // From here on the destructor removes the file if anything below throws.
    if (f.remove_on_close_ && !options.registry_path.empty()) {
      try {
        FileRegistry(options.registry_path).add(f.created_file_);
      } catch (...) {
        ::close(cfd);
        throw;
      }
      f.registry_path_ = options.registry_path;
    }
    std::string header = header_text(f.created_file_.token, options.keep);
    header.resize(kHeaderBytes, '\0');
    const ssize_t w = ::pwrite(cfd, header.data(), header.size(), 0);
    const int err = errno;
    ::close(cfd);
    if (w != static_cast<ssize_t>(header.size())) {
      throw IoError("cannot write header of " + path + ": " + errno_text(err));
    }
  }

  const int flags = O_RDWR | O_CLOEXEC | (options.direct ? O_DIRECT : 0);
  f.fd_ = ::open(path.c_str(), flags);
  if (f.fd_ < 0) {
    if (errno == EINVAL && options.direct) {
      throw DirectIoUnsupported("cannot open " + path +
                                " with O_DIRECT (EINVAL): the file system does not support direct "
                                "I/O (tmpfs?). Use a directory on a real drive, or --buffered "
                                "(results then include the page cache).");
    }
    throw IoError("cannot open " + path + ": " + errno_text(errno));
  }
  if (existing_bytes < total) {
    // Reserve the space up front so a full disk fails here, not half-way through a sweep.
    const int fa = ::posix_fallocate(f.fd_, 0, static_cast<off_t>(total));
    if (fa == ENOSPC) throw IoError("no space for " + gib_text(total) + " in " + path);
    const std::uint64_t from = std::max(existing_bytes, kRegionOffsetBytes) / kHeaderBytes * kHeaderBytes;
    fill_random(f.fd_, from, total - from, options, path);
  }
  return f;
}

CalibrationFile CalibrationFile::create_in_dir(const std::string& dir, int index,
                                               const FileOptions& options) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw IoError("target " + dir + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) throw IoError("target " + dir + " is not a directory");
  auto name = [&](int i) {
    return (fs::path(dir) / (std::string(kFilePrefix) + std::to_string(::getpid()) + "-" + std::to_string(i) + ".dat"))
        .string();
  };
  std::string path = name(index);
  // A name waiting for deferred removal belongs to an earlier measurement of this run.
  for (int i = index; options.deferred_removal && options.deferred_removal->holds(path);) path = name(i += 1000);
  // A file already there under this name (a --keep file of an earlier run whose pid this process
  // reuses) is used but stays: this run did not create it.
  return open_owned(path, options);
}

CalibrationFile CalibrationFile::open_path(const std::string& path, const FileOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return create_in_dir(path, 0, options);
  return open_owned(path, options);
}

CalibrationFile CalibrationFile::open_raw_device(const std::string& device,
                                                 const std::string& confirmation,
                                                 const FileOptions& options) {
  check_raw_device_consent(device, confirmation);
  CalibrationFile f;
  f.path_ = device;
  f.direct_ = true;
  f.fd_ = ::open(device.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC | O_EXCL);
  if (f.fd_ < 0) throw IoError("cannot open raw device " + device + ": " + errno_text(errno));
  std::uint64_t size_bytes = 0;
  if (::ioctl(f.fd_, BLKGETSIZE64, &size_bytes) != 0) {
    throw IoError("cannot read the size of " + device + ": " + errno_text(errno));
  }
  f.region_offset_bytes_ = 0;
  f.region_bytes_ = std::min(options.region_bytes, size_bytes / kRegionOffsetBytes * kRegionOffsetBytes);
  // Reads of never-written flash return zeros without touching NAND; write the region first.
  fill_random(f.fd_, 0, f.region_bytes_, options, device);
  return f;
}

}  // namespace tiersim::calibrate
