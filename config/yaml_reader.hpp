#pragma once
// Strict YAML reading: a YAML::Node that remembers which file it came from, its key path and its
// line, so that every error the configuration code raises reads "FILE:LINE: key.path: what was
// expected". Nothing here is lenient: unknown keys, wrong types and duplicate keys are errors.
#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/files.hpp"  // kMaxInputFileBytes, the one rule for input files

namespace tiersim::config {

class YNode {
 public:
  YNode() = default;
  // `file` is the name errors show; `lines_known` is false for text that has no meaningful line
  // (a --set value), so errors then name only the file ("--set") and the key.
  YNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path,
        bool lines_known = true);
  // Assignment rebinds this YNode to the other's node. (YAML::Node's own assignment writes the
  // other node's content into the node this one refers to, inside its tree: assigning a --set
  // value over a file's value would change the parsed file, which ScenarioSource reuses.)
  YNode(const YNode&) = default;
  YNode(YNode&&) = default;
  YNode& operator=(const YNode& other) {
    if (this != &other) {
      node_.reset(other.node_);
      file_ = other.file_;
      path_ = other.path_;
      lines_known_ = other.lines_known_;
    }
    return *this;
  }
  YNode& operator=(YNode&& other) {
    node_.reset(other.node_);
    file_ = std::move(other.file_);
    path_ = std::move(other.path_);
    lines_known_ = other.lines_known_;
    return *this;
  }

  const YAML::Node& raw() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const;
  int line() const;  // 1-based, 0 when unknown

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }
  // "a map", "a list", "'text'", "nothing": for "expected X, got Y" messages.
  std::string describe() const;

  // Throws ConfigError(file, line, path, message).
  [[noreturn]] void fail(const std::string& message) const;
  // Same, but for a key below this node that does not exist (missing required key).
  [[noreturn]] void fail_missing(const std::string& key, const std::string& expected) const;

  // The scalar text; fails with "expected <what>, got <describe()>" for maps and lists.
  std::string scalar(const std::string& what) const;

  // Map access. entries() fails when this node is not a map, and on duplicate keys.
  std::vector<std::pair<std::string, YNode>> entries() const;
  std::optional<YNode> get(const std::string& key) const;
  YNode require(const std::string& key, const std::string& expected) const;
  // Fails on the first key not in `valid`, with a near-match suggestion and the valid list.
  // `shown`, when given, is what an unknown key's message lists and suggests from (the keys of
  // the scenario's workload kind), `valid` what is accepted; a suggestion falls back to `valid`.
  void check_keys(const std::vector<std::string>& valid,
                  const std::vector<std::string>* shown = nullptr) const;
  // List access; fails when this node is not a list.
  std::vector<YNode> items() const;

  // Typed scalars with range checks; messages say what was expected and what was found.
  std::string as_string() const;  // non-empty scalar
  double as_double(double min, double max, bool min_exclusive = false) const;
  long long as_int(long long min, long long max) const;
  bool as_bool() const;
  double as_size_bytes(bool allow_zero = false) const;
  // A duration with its unit ("2s", "200ms", "50us", "1.5min"), in seconds. A bare number fails:
  // latency targets are read in seconds by some tools and in milliseconds by others.
  double as_duration_s(double min, double max, bool min_exclusive = false) const;

  // This node as the root of a document of its own (an inline scenario in a comparison file):
  // its keys' paths start from it, errors still name its file and lines.
  YNode as_root() const { return YNode(node_, file_, "", lines_known_); }

  // The key path of a child, "a.b" + "c" -> "a.b.c".
  std::string child_path(const std::string& key) const;
  YNode child(const YAML::Node& node, const std::string& key) const;

 private:
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
  bool lines_known_ = true;
};

// Parses YAML text. Syntax errors become ConfigError(display_name, line, "", message).
YNode parse_yaml_text(const std::string& text, const std::string& display_name,
                      bool lines_known = true);
// Every input file (scenario, catalog, compare, sweep, plan, device profile) is read here, under
// the one rule for input files (model/files.hpp: a regular file of at most kMaxInputFileBytes).
// The whole text of `path`, without a UTF-8 byte order mark. ConfigError(path, ...) when it
// cannot be opened, is not a regular file (a directory, a device such as /dev/zero, a pipe) or is
// larger than kMaxInputFileBytes. `what` names the kind of file in messages ("scenario file",
// "device profile").
std::string read_input_file(const std::string& path, const std::string& what);
// Reads and parses a file; a missing or unreadable file is a ConfigError too.
YNode parse_yaml_file(const std::string& path, const std::string& what = "file");
// The whole file as text; nullopt when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

// Levenshtein distance, for near-match suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word` (case-insensitive) if it is close enough to be a plausible typo,
// else "".
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);
// "a, b, c"
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
std::string to_lower(std::string s);

// "16MiB", "4KiB", "1GiB", "1.5GB", "4096" (plain numbers are bytes). nullopt when malformed.
std::optional<double> parse_size(const std::string& text);
// "2s", "200ms", "50us", "1.5min", "1h" in seconds; nullopt when malformed or without a unit.
std::optional<double> parse_duration_s(const std::string& text);
// Shortest text that reads back as exactly the same double ("0.1", "96", "1.5e+09").
std::string format_number(double value);

}  // namespace tiersim::config
