#pragma once
// A scratch directory for one test, removed with everything in it at the end.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace tiersim::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
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
