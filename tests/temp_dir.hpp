#pragma once
// A scratch directory for one test, removed with everything in it at the end.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tiersim::test {

class TempDir {
 public:
  TempDir() : TempDir(nullptr) {}
  // Under the directory the environment variable `parent_env` names, when it is set: real-I/O
  // tests need a disk-backed parent where the system's temp dir is tmpfs (no O_DIRECT).
  explicit TempDir(const char* parent_env) {
    static std::atomic<int> counter{0};
    const char* parent = parent_env ? std::getenv(parent_env) : nullptr;
    path_ = (parent ? std::filesystem::path(parent) : std::filesystem::temp_directory_path()) /
            ("tiersim-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Regular files of any name left in the directory.
  int regular_files() const {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      n += e.is_regular_file() ? 1 : 0;
    return n;
  }
  // Calibration files (.tiersim-calib-*) left in the directory.
  int calibration_files() const {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      if (e.path().filename().string().rfind(".tiersim-calib-", 0) == 0) ++n;
    }
    return n;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tiersim::test
