#pragma once
// The files calibration reads and writes, and the safety rules around them:
//  - it writes only files it creates itself (`.tiersim-calib-<pid>-<n>.dat`), each starting with
//    a 4 KiB ownership header (with a random token), so a later run can tell its own files from
//    anyone else's and refuses to touch a file without that header;
//  - it deletes only files it can prove it created: created here with O_EXCL, still the same
//    regular file (device and inode, never a symlink), never a --keep file. Files left by a run
//    that died (SIGKILL) are deleted only when they are in the registry of a results database
//    (table calibration_files) with the token their header carries, never by name alone;
//  - it checks free space first and refuses when too little would remain;
//  - it removes its files when the CalibrationFile is destroyed (normal exit, exceptions, and the
//    stop-flag path that SIGINT/SIGTERM take);
//  - it touches a raw block device only when the device is named twice.
// The measured region starts 1 MiB into a file, after the header, so benchmark writes never
// overwrite it and every block size up to 1 MiB stays aligned to itself.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace tiersim::calibrate {

// Refusals of the safety rules above. The command reports them as usage errors.
class SafetyError : public Error {
 public:
  using Error::Error;
};

// The file system rejects O_DIRECT (tmpfs, some FUSE and network file systems).
class DirectIoUnsupported : public IoError {
 public:
  using IoError::IoError;
};

inline constexpr std::uint64_t kHeaderBytes = 4096;
inline constexpr std::uint64_t kRegionOffsetBytes = 1 << 20;
inline constexpr const char* kFilePrefix = ".tiersim-calib-";

struct SafetyLimits {
  // Free space that must remain on the file system after the calibration files are created.
  std::uint64_t reserve_free_bytes = 1ull << 30;
  // Available bytes on the file system holding a path; statvfs by default, injectable for tests.
  std::function<std::uint64_t(const std::string&)> free_bytes;
};

// statvfs: bytes available to unprivileged users on the file system holding `path`.
std::uint64_t statvfs_free_bytes(const std::string& path);

// Throws SafetyError when creating `need_bytes` in `dir` would leave less than the reserve.
void check_free_space(const std::string& dir, std::uint64_t need_bytes, const SafetyLimits& limits);

// Throws SafetyError unless `confirmation` names the same device as `device`, and that is a block
// device.
void check_raw_device_consent(const std::string& device, const std::string& confirmation);

// True when `path` starts with tiersim's ownership header.
bool is_own_file(const std::string& path);

// A scratch file this process created: what deleting it later must find again.
struct CreatedFile {
  std::string path;
  std::string token;  // random, also in the file's header
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// Deletes `f.path` only when it is still the regular file that was created (same device and
// inode; a symlink or a replaced file is left alone). True when it deleted it.
bool remove_created_file(const CreatedFile& f);

// Scratch files recorded in a results database (table calibration_files, next to the calibration
// points) while they exist, so that a later run can remove those of a run that died.
class FileRegistry {
 public:
  explicit FileRegistry(const std::string& db_path);
  ~FileRegistry();
  FileRegistry(const FileRegistry&) = delete;
  FileRegistry& operator=(const FileRegistry&) = delete;
  void add(const CreatedFile& f);
  void forget(const std::string& token);
  // Removes the registered files of this host whose creating process is gone, when the file is
  // still the one created (remove_created_file) and its header carries the registered token;
  // forgets entries whose file is gone or changed. Returns how many files it removed.
  int remove_stale_files();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Where a path lives: for the results store and the profile's `measured` block.
struct TargetDescription {
  std::string filesystem;   // e.g. ext4
  std::string device;       // e.g. /dev/nvme0n1p2 (Samsung PM9A3)
  std::string mount_point;
};
TargetDescription describe_target(const std::string& path);

// The PCIe link of the drive under `path` (a file, directory or block device), from the first
// device above it in sysfs that reports current_link_speed and current_link_width (an NVMe drive's
// PCI function does; virtio disks usually do not). gbps = 0 when unknown.
struct InterfaceLink {
  double gbps = 0;          // model/hardware.hpp pcie_link_gbps(generation, lanes)
  std::string description;  // e.g. "PCIe Gen4 x4 (sysfs)"
};
InterfaceLink drive_interface(const std::string& path);
// sysfs's current_link_speed text ("16.0 GT/s PCIe", "8 GT/s") -> PCIe generation; 0 when unknown.
int pcie_generation_from_link_speed(const std::string& text);

// Which pages back an I/O buffer. It changes what a request costs the block layer: a 1 MiB request
// over 4 KiB pages is 256 scatter-gather segments, over 2 MiB pages one or two, and a queue with a
// small segment limit (virtio-blk here: /sys/block/vda/queue/max_segments = 254) splits the former
// in two. Comparisons with another tool (fio) must use the same kind on both sides.
//  - automatic: transparent huge pages for buffers of 2 MiB and more, 4 KiB pages below;
//  - small:     4 KiB pages, transparent huge pages refused (MADV_NOHUGEPAGE);
//  - huge:      2 MiB-aligned, rounded up to 2 MiB, transparent huge pages requested.
enum class BufferPages { automatic, small, huge };
const char* buffer_pages_name(BufferPages pages);         // auto, 4k, huge
BufferPages parse_buffer_pages(const std::string& name);  // throws Error naming the valid names

// The share of [data, data + size_bytes) that the kernel has backed with anonymous huge pages, from
// /proc/self/smaps (AnonHugePages of the mappings overlapping the range); 0 when unreadable.
double huge_page_fraction(const void* data, std::size_t size_bytes);

// Page-aligned heap memory, as O_DIRECT requires, on the pages `pages` asks for.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t size_bytes, BufferPages pages = BufferPages::automatic);
  void* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Unmap {
    std::size_t bytes;  // the whole mapping, alignment slack trimmed (value-initialised: 0)
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Unmap> data_;
  std::size_t size_ = 0;
};

// Files a run created and wants removed later, all at once. Freeing blocks on a file system mounted
// with `discard` sends discards to the drive, and writes measured while those were pending ran 3-5x
// slower (or, landing on just-freed blocks, faster) than on long-free space; the hardware suite
// therefore keeps every file it creates until it ends.
class DeferredRemoval {
 public:
  DeferredRemoval() = default;
  DeferredRemoval(const DeferredRemoval&) = delete;
  DeferredRemoval& operator=(const DeferredRemoval&) = delete;
  ~DeferredRemoval();  // removes every file handed over
  void add(const CreatedFile& file, const std::string& registry_path);
  bool holds(const std::string& path) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<CreatedFile, std::string>> files_;  // file, registry ("" = none)
};

struct FileOptions {
  std::uint64_t region_bytes = 1ull << 30;  // bytes the benchmark reads and writes
  bool direct = true;                       // O_DIRECT (false: --buffered, page cache in the way)
  bool keep = false;                        // leave a file this run created in place at exit
  // Hand a created file to this list at close instead of removing it (and never reuse a name the
  // list holds: a "fresh file" must get fresh blocks).
  DeferredRemoval* deferred_removal = nullptr;
  // Results database recording each created scratch file until it is removed (FileRegistry);
  // "" = none: files of a run killed with SIGKILL then stay (no proof they are tiersim's).
  std::string registry_path;
  std::uint64_t seed = 1;                   // fill data
  const std::atomic<bool>* stop = nullptr;  // set by the signal handler: abandon the fill
  SafetyLimits limits;
};

// One open calibration target. Move-only; the destructor closes it and removes the file when
// this run created it (unless `keep`).
class CalibrationFile {
 public:
  // Creates `.tiersim-calib-<pid>-<index>.dat` in `dir` (or reuses it when it already carries
  // tiersim's header; refuses when it does not), filled with random data.
  static CalibrationFile create_in_dir(const std::string& dir, int index, const FileOptions& options);
  // Uses `path` itself: creates it when absent, reuses it when it carries tiersim's header,
  // refuses otherwise.
  static CalibrationFile open_path(const std::string& path, const FileOptions& options);
  // A raw block device, after check_raw_device_consent. Everything in the region is overwritten.
  static CalibrationFile open_raw_device(const std::string& device, const std::string& confirmation,
                                         const FileOptions& options);

  CalibrationFile(CalibrationFile&& other) noexcept;
  CalibrationFile& operator=(CalibrationFile&&) = delete;
  CalibrationFile(const CalibrationFile&) = delete;
  ~CalibrationFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t region_offset_bytes() const { return region_offset_bytes_; }
  std::uint64_t region_bytes() const { return region_bytes_; }
  bool created() const { return created_; }
  bool direct() const { return direct_; }

 private:
  CalibrationFile() = default;
  static CalibrationFile open_owned(const std::string& path, const FileOptions& options);

  int fd_ = -1;
  std::string path_;
  CreatedFile created_file_;   // set when this run created the file
  std::string registry_path_;  // where it is registered ("" = nowhere)
  std::uint64_t region_offset_bytes_ = 0;
  std::uint64_t region_bytes_ = 0;
  bool created_ = false;
  bool remove_on_close_ = false;
  bool direct_ = true;
  DeferredRemoval* deferred_removal_ = nullptr;
};

}  // namespace tiersim::calibrate
