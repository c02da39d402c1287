#pragma once
// The one rule for the files tiersim reads (scenarios, catalogs, sweeps, plans, device profiles,
// request traces) and the one rule for the files it writes (reports, plan scenarios, device
// profiles, traces). Not a model: it lives here because every library folder can reach model/.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tiersim {

// ---- Input files ----------------------------------------------------------------------------

// Hand-written YAML (scenarios, catalogs, sweeps, plans, device profiles) is a few kilobytes; the
// bound keeps `tiersim run /dev/zero` or a mistyped path to a disk image from exhausting memory
// before a single line is parsed.
inline constexpr std::uint64_t kMaxInputFileBytes = 16u << 20;  // 16 MiB
// Request traces are read row by row, up to workload.requests rows; Azure's week-long 2024 traces
// are tens of MB. The bound stops a path to a disk image or a log from being scanned for minutes.
inline constexpr std::uint64_t kMaxTraceFileBytes = 1ull << 30;  // 1 GiB

// Checks `path` before it is opened: it must exist and be a regular file (not a directory, a
// device such as /dev/zero, a FIFO that would block the open, a socket) of at most `max_bytes`.
// Throws ConfigError(path, 0, key, ...) whose message names `what` ("trace file", "scenario
// file"). Returns the size in bytes.
std::uint64_t check_input_file(const std::string& path, const std::string& what,
                               std::uint64_t max_bytes, const std::string& key = "");

// FNV-1a 64 (model/stable_hash.hpp) of the whole file, read in pieces, as 16 hex digits: what a
// scenario's hash includes of each file it references (a request trace, a device profile), so
// that editing the file changes the hash and a resumed sweep does not keep results of the old
// contents. Throws ConfigError(path, 0, key, ...) as check_input_file does, or when reading fails.
std::string file_content_hash(const std::string& path, const std::string& what,
                              std::uint64_t max_bytes, const std::string& key = "");

// A UTF-8 byte order mark (EF BB BF), which editors on Windows put at the start of a file; every
// reader drops it, so that it can neither fail a header match nor show up in a message.
bool strip_utf8_bom(std::string& text);

// `text` as it may appear in a message: control characters and a byte order mark written as
// \xNN escapes (visible), and at most `max_chars` characters with the length of the rest named
// ("... (5242880 bytes in all)"), so that an error never echoes a whole multi-megabyte line.
std::string excerpt(std::string_view text, std::size_t max_chars = 120);

// ---- Output files ---------------------------------------------------------------------------

// Every file tiersim writes goes through write_output_file:
//  - the text goes to a new temporary file in the same folder (O_EXCL), is synced, and is renamed
//    over `path`, so a full disk or a crash leaves either the previous file or the new one, never
//    a truncated one;
//  - a symbolic link at `path` is never followed (the rename replaces the link itself, and only
//    with `force`);
//  - an existing file is replaced only if tiersim wrote it: each folder tiersim writes into holds a
//    manifest (kOutputManifest) of the names it wrote there. Any other existing file, a symbolic
//    link or a non-regular file at `path` is refused with an IoError that says how to force it
//    (`force_hint`, e.g. "pass --force"), unless `force` is set.
inline constexpr const char* kOutputManifest = ".tiersim-outputs";

struct OutputOptions {
  bool force = false;      // replace a file tiersim did not write (never a directory)
  std::string force_hint = "pass --force to replace it";
};

// Throws IoError naming `path` and `what` ("report file", "device profile") when the file may not
// be replaced or cannot be written; `path` is then unchanged.
void write_output_file(const std::string& path, const std::string& text, const std::string& what,
                       const OutputOptions& options = {});

// Whether `path` may be written under the rule above (the check write_output_file makes first):
// "" when it may, else the reason. Lets a command check its outputs before long work
// (`calibrate --out` before measuring, a report before building its pages).
std::string output_refusal(const std::string& path, const OutputOptions& options = {});
// The same as an IoError("will not write <what> '<path>': <reason>").
void check_output_file(const std::string& path, const std::string& what,
                       const OutputOptions& options = {});

// Creates `dir` (and its parents) for outputs; IoError naming it on failure.
void make_output_dir(const std::string& dir, const std::string& what);

}  // namespace tiersim
