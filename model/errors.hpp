#pragma once
// Typed errors thrown by library code. Only app/main.cpp turns them into exit codes.
#include <stdexcept>
#include <string>

namespace tiersim {

// Base of every error tiersim reports to a user; what() is the full, user-facing message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad configuration: carries where it came from so the message can name file, line and key.
class ConfigError : public Error {
 public:
  ConfigError(std::string file, int line, std::string key_path, const std::string& message)
      : Error(format(file, line, key_path, message)),
        file_(std::move(file)),
        line_(line),
        key_path_(std::move(key_path)),
        message_(message) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 1-based; 0 when unknown
  const std::string& key_path() const { return key_path_; }
  // What is wrong, without the file, line and key what() puts before it: for an error re-raised
  // at another place (a sweep value checked on its own, reported at its line in the sweep file).
  const std::string& message() const { return message_; }

 private:
  static std::string format(const std::string& file, int line, const std::string& key,
                            const std::string& message) {
    // Appended piece by piece: GCC 12 misreads `":" + std::to_string(line)` as an overflow.
    std::string s = file.empty() ? std::string("<input>") : file;
    if (line > 0) s.append(":").append(std::to_string(line));
    if (!key.empty()) s.append(": ").append(key);
    return s.append(": ").append(message);
  }
  std::string file_;
  int line_;
  std::string key_path_;
  std::string message_;
};

// A catalog lookup failed; the message lists the valid names.
class CatalogError : public Error {
 public:
  using Error::Error;
};

// A scenario is internally inconsistent in a way only the model can see (e.g. heads not divisible
// by tensor-parallel degree).
class ModelError : public Error {
 public:
  using Error::Error;
};

// An I/O or system call failed (calibration, replay, results store).
class IoError : public Error {
 public:
  using Error::Error;
};

// A long computation stopped because its caller asked it to: SIGINT or SIGTERM during a
// calibration or replay, Ctrl-C in the Python module through a stop flag the simulation polls.
class Interrupted : public Error {
 public:
  using Error::Error;
};

// The results store failed (SQLite).
class StoreError : public Error {
 public:
  using Error::Error;
};

}  // namespace tiersim
