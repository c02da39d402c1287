#include "model/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/errors.hpp"
#include "model/stable_hash.hpp"

namespace tiersim {
namespace fs = std::filesystem;

std::uint64_t check_input_file(const std::string& path, const std::string& what,
                               std::uint64_t max_bytes, const std::string& key) {
  // stat, not open: opening a FIFO blocks until a writer comes, and reading /dev/zero never ends.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw ConfigError(path, 0, key,
                      "cannot open " + what + ": " +
                          (err == ENOENT ? std::string("no such file") : std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) throw ConfigError(path, 0, key, "is a directory, not a " + what);
  if (!S_ISREG(st.st_mode))
    throw ConfigError(path, 0, key,
                      "is not a regular file (a device, pipe or socket), not a " + what);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw ConfigError(path, 0, key,
                      what + " is larger than the limit of " + std::to_string(max_bytes >> 20) +
                          " MiB for such files (" + std::to_string(size) + " bytes)");
  return size;
}

std::string file_content_hash(const std::string& path, const std::string& what,
                              std::uint64_t max_bytes, const std::string& key) {
  check_input_file(path, what, max_bytes, key);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, key, "cannot open " + what + " (permission denied?)");
  std::uint64_t h = kFnv1a64Basis;
  std::uint64_t total = 0;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    h = fnv1a64(std::string_view(buf, n), h);
    if ((total += n) > max_bytes)  // grew since the check
      throw ConfigError(path, 0, key, what + " is larger than the limit for such files");
  }
  if (in.bad()) throw ConfigError(path, 0, key, "error reading " + what);
  return hex_hash(h);
}

bool strip_utf8_bom(std::string& text) {
  if (text.rfind("\xEF\xBB\xBF", 0) != 0) return false;
  text.erase(0, 3);
  return true;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  const std::size_t shown = std::min(text.size(), max_chars);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool bom = text.substr(i, 3) == "\xEF\xBB\xBF";
    if (c < 0x20 || c == 0x7f || bom) {
      char buf[8];
      for (std::size_t k = 0; k < (bom ? 3u : 1u); ++k) {
        std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(text[i + k]));
        out += buf;
      }
      i += bom ? 2 : 0;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < text.size())
    out += "... (" + std::to_string(text.size()) + " bytes in all)";
  return out;
}

namespace {

fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// The names listed in the manifest of `folder` (none when it has none).
std::vector<std::string> manifest_names(const fs::path& folder) {
  std::vector<std::string> names;
  const fs::path m = folder / kOutputManifest;
  struct stat st {};
  // Only a regular file counts as a manifest: a link or FIFO planted there is ignored.
  if (::lstat(m.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > kMaxInputFileBytes)
    return names;
  std::ifstream in(m, std::ios::binary);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

// Writes `text` to a new file next to `path` and renames it over `path`; `path` is unchanged on
// any failure. Returns 0 or the errno of the failing step.
int replace_atomically(const std::string& path, const std::string& text) {
  // mkstemp opens with O_EXCL: nobody's `path.tmp` is truncated, and a link at the temporary name
  // cannot be followed.
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return errno;
  std::size_t done = 0;
  int err = 0;
  while (done < text.size() && err == 0) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0)
      done += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EINTR)
      err = errno;
    else if (n == 0)
      err = EIO;
  }
  // mkstemp creates 0600; outputs are meant to be shared (rw-r--r--, as an ofstream made them).
  if (err == 0 && ::fchmod(fd, 0644) != 0) err = errno;
  // Synced before the rename: otherwise a crash could leave the new name on an empty file.
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  // rename replaces a link at `path` itself; it never writes through it.
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(tmp.c_str());
  return err;
}

}  // namespace

std::string output_refusal(const std::string& path, const OutputOptions& options) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "";
    return std::strerror(errno);
  }
  if (S_ISDIR(st.st_mode)) return "it is a folder";
  const std::string how = "; " + options.force_hint;
  if (S_ISLNK(st.st_mode))
    return options.force ? ""
                         : "it is a symbolic link, which tiersim does not write through" + how +
                               " (the link itself is replaced, not its target)";
  if (!S_ISREG(st.st_mode))
    return options.force ? "" : "it exists and is not a regular file" + how;
  if (options.force) return "";
  const std::string name = fs::path(path).filename().string();
  const auto names = manifest_names(folder_of(path));
  if (std::find(names.begin(), names.end(), name) != names.end()) return "";
  return "it exists and was not written by tiersim (it is not listed in " +
         (folder_of(path) / kOutputManifest).string() + ")" + how;
}

void check_output_file(const std::string& path, const std::string& what,
                       const OutputOptions& options) {
  if (const std::string why = output_refusal(path, options); !why.empty())
    throw IoError("will not write " + what + " '" + path + "': " + why);
}

void write_output_file(const std::string& path, const std::string& text, const std::string& what,
                       const OutputOptions& options) {
  check_output_file(path, what, options);
  if (const int err = replace_atomically(path, text))
    throw IoError("cannot write " + what + " '" + path + "': " + std::strerror(err) +
                  " (any previous file is unchanged)");
  // Registered after the rename: a crash in between leaves a file that the next run refuses to
  // replace without force, never a manifest naming a file tiersim did not write.
  const fs::path folder = folder_of(path);
  const std::string name = fs::path(path).filename().string();
  auto names = manifest_names(folder);
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  names.push_back(name);
  std::string manifest =
      "# Files tiersim wrote in this folder; tiersim replaces only these without --force.\n";
  for (const auto& n : names) manifest += n + "\n";
  if (const int err = replace_atomically((folder / kOutputManifest).string(), manifest))
    throw IoError("wrote " + what + " '" + path + "' but cannot update " +
                  (folder / kOutputManifest).string() + ": " + std::strerror(err));
}

void make_output_dir(const std::string& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create " + what + " '" + dir + "': " + ec.message());
}

}  // namespace tiersim
