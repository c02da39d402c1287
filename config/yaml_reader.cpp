#include "config/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include <yaml-cpp/eventhandler.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "model/errors.hpp"
#include "model/files.hpp"
#include "common/format.hpp"

namespace tiersim::config {

namespace {

// Parses the whole of `text` as a finite double; trailing garbage makes it fail.
std::optional<double> parse_double(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (*begin == '+') ++begin;  // from_chars rejects a leading '+', YAML allows it
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string range_text(double min, double max, bool min_exclusive, bool integer) {
  const std::string kind = integer ? "an integer" : "a number";
  const bool has_min = min > -std::numeric_limits<double>::max();
  const bool has_max = max < std::numeric_limits<double>::max();
  if (has_min && min == 0 && min_exclusive && !has_max)
    return integer ? "a positive integer" : "a positive number";
  if (has_min && has_max && !min_exclusive)
    return kind + " in [" + format_number(min) + ", " + format_number(max) + "]";
  std::string s = kind;
  if (has_min) s += (min_exclusive ? " > " : " >= ") + format_number(min);
  if (has_max) s += std::string(has_min ? " and" : "") + " <= " + format_number(max);
  return s;
}

}  // namespace

YNode::YNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path,
             bool lines_known)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)),
      lines_known_(lines_known) {}

const std::string& YNode::file() const {
  static const std::string kNone;  // immutable; only for default-constructed nodes
  return file_ ? *file_ : kNone;
}

int YNode::line() const {
  if (!lines_known_ || !node_.IsDefined()) return 0;
  const YAML::Mark mark = node_.Mark();
  return mark.line < 0 ? 0 : mark.line + 1;
}

std::string YNode::describe() const {
  if (is_null()) return "nothing";
  if (is_map()) return "a map";
  if (is_sequence()) return "a list";
  // An excerpt: a multi-megabyte value must not come back whole in the message (model/files.hpp).
  // Appended piece by piece: GCC 12 misreads "'" + std::string as an overflow.
  std::string quoted = "'";
  quoted.append(excerpt(node_.Scalar())).append("'");
  return quoted;
}

void YNode::fail(const std::string& message) const {
  throw ConfigError(file(), line(), path_, message);
}

void YNode::fail_missing(const std::string& key, const std::string& expected) const {
  throw ConfigError(file(), line(), child_path(key),
                    "missing required key (expected " + expected + ")");
}

std::string YNode::scalar(const std::string& what) const {
  if (!is_scalar()) fail("expected " + what + ", got " + describe());
  return node_.Scalar();
}

std::string YNode::child_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

YNode YNode::child(const YAML::Node& node, const std::string& key) const {
  return YNode(node, file_, child_path(key), lines_known_);
}

std::vector<std::pair<std::string, YNode>> YNode::entries() const {
  if (!is_map()) fail("expected a map of keys, got " + describe());
  std::vector<std::pair<std::string, YNode>> out;
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    YNode key_node(it->first, file_, path_, lines_known_);
    const std::string key = key_node.scalar("a key");
    if (!seen.insert(key).second) {
      YNode(it->first, file_, child_path(key), lines_known_).fail("duplicate key");
    }
    out.emplace_back(key, child(it->second, key));
  }
  return out;
}

std::optional<YNode> YNode::get(const std::string& key) const {
  for (auto& [k, v] : entries())
    if (k == key) return v;
  return std::nullopt;
}

YNode YNode::require(const std::string& key, const std::string& expected) const {
  auto v = get(key);
  if (!v) fail_missing(key, expected);
  return *v;
}

void YNode::check_keys(const std::vector<std::string>& valid,
                       const std::vector<std::string>* shown) const {
  if (!is_map()) fail("expected a map of keys, got " + describe());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    YNode key_node(it->first, file_, path_, lines_known_);
    const std::string key = key_node.scalar("a key");
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    YNode at(it->first, file_, child_path(key), lines_known_);
    const std::vector<std::string>& listed = shown ? *shown : valid;
    std::string hint = did_you_mean(key, listed);
    if (hint.empty()) hint = did_you_mean(key, valid);
    at.fail("unknown key" + hint + "; valid keys" +
            (path_.empty() ? std::string() : " in '" + path_ + "'") + ": " + join(listed));
  }
}

std::vector<YNode> YNode::items() const {
  if (!is_sequence()) fail("expected a list, got " + describe());
  std::vector<YNode> out;
  std::size_t i = 0;
  for (auto it = node_.begin(); it != node_.end(); ++it, ++i)
    out.push_back(YNode(*it, file_, path_ + "[" + std::to_string(i) + "]", lines_known_));
  return out;
}

std::string YNode::as_string() const {
  std::string s = scalar("a text value");
  if (s.empty()) fail("expected a non-empty text value");
  return s;
}

double YNode::as_double(double min, double max, bool min_exclusive) const {
  const std::string what = range_text(min, max, min_exclusive, false);
  auto v = parse_double(scalar(what));
  if (!v) fail("expected " + what + ", got " + describe());
  if (*v < min || (min_exclusive && *v == min) || *v > max)
    fail("expected " + what + ", got " + describe() + " (out of range)");
  return *v;
}

long long YNode::as_int(long long min, long long max) const {
  const bool exclusive_zero = min == 1;  // "a positive integer" reads better than ">= 1"
  const std::string what =
      range_text(exclusive_zero ? 0.0 : static_cast<double>(min),
                 // int-sized limits are implementation limits, not worth mentioning
                 max >= 2000000000LL ? std::numeric_limits<double>::max() : static_cast<double>(max),
                 exclusive_zero, true);
  auto v = parse_double(scalar(what));
  if (!v || std::floor(*v) != *v || std::fabs(*v) > 9.0e15) fail("expected " + what + ", got " + describe());
  const auto i = static_cast<long long>(*v);
  if (i < min || i > max) fail("expected " + what + ", got " + describe() + " (out of range)");
  return i;
}

bool YNode::as_bool() const {
  const std::string s = to_lower(scalar("true or false"));
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail("expected true or false, got " + describe());
}

double YNode::as_size_bytes(bool allow_zero) const {
  const std::string what = std::string("a ") + (allow_zero ? "" : "positive ") +
                           "size (bytes, or with a unit: 4KiB, 16MiB, 1GiB, 1.5GB)";
  auto v = parse_size(scalar(what));
  if (!v) fail("expected " + what + ", got " + describe());
  if (*v < 0 || (!allow_zero && *v == 0)) fail("expected " + what + ", got " + describe());
  return *v;
}

namespace {

// Counts the documents of a YAML stream without building them, stopping at the second. yaml-cpp's
// LoadAll can keep returning empty documents on some malformed inputs until memory runs out (found
// by the fuzzer, tests/fuzz/): never collect more than two.
class DocumentCounter : public YAML::EventHandler {
 public:
  int documents = 0;
  YAML::Mark second;  // where the second document starts
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2) second = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// A second document needs a document marker ("---" or "...") at the start of a line.
bool may_hold_markers(const std::string& text) {
  for (const std::string_view marker : {"---", "..."}) {
    for (std::size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at + 1))
      if (at == 0 || text[at - 1] == '\n') return true;
  }
  return false;
}

}  // namespace

double YNode::as_duration_s(double min, double max, bool min_exclusive) const {
  const std::string what = "a duration with a unit (s, ms, us, min or h; e.g. 2s, 200ms)";
  const std::string text = scalar(what);
  auto v = parse_duration_s(text);
  if (!v) {
    if (parse_double(text)) fail("expected " + what + ", got " + describe() + " (no unit)");
    fail("expected " + what + ", got " + describe());
  }
  if (*v < min || (min_exclusive && *v == min) || *v > max)
    fail("expected " + range_text(min, max, min_exclusive, false) + " of seconds, got " +
         describe() + " (out of range)");
  return *v;
}

YNode parse_yaml_text(const std::string& text, const std::string& display_name,
                      bool lines_known) {
  auto file = std::make_shared<const std::string>(display_name);
  try {
    if (may_hold_markers(text)) {
      std::istringstream in(text);
      YAML::Parser parser(in);
      DocumentCounter counter;
      while (counter.documents < 2 && parser.HandleNextDocument(counter)) {
      }
      if (counter.documents > 1) {
        // A second document would be silently ignored: say so instead.
        const int line = lines_known && counter.second.line >= 0 ? counter.second.line + 1 : 0;
        throw ConfigError(display_name, line, "",
                          "a second YAML document (after '---'); a file holds one document");
      }
    }
    return YNode(YAML::Load(text), file, "", lines_known);
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.what() repeats the position in yaml-cpp's own format.
    const int line = (lines_known && e.mark.line >= 0) ? e.mark.line + 1 : 0;
    std::string msg = "YAML syntax error: " + e.msg;
    // yaml-cpp says "illegal map value" or the like for a tab in the indentation; YAML forbids
    // tabs there, which an editor hides.
    if (e.mark.line >= 0) {
      std::size_t begin = 0;
      for (int l = 0; l < e.mark.line && begin != std::string::npos; ++l) {
        begin = text.find('\n', begin);
        if (begin != std::string::npos) ++begin;
      }
      if (begin != std::string::npos && begin < text.size()) {
        const std::size_t indent_end = text.find_first_not_of(" \t", begin);
        const std::size_t tab = text.find('\t', begin);
        if (tab != std::string::npos && tab < indent_end)
          msg += " (the line is indented with a tab; YAML indents with spaces only)";
      }
    }
    throw ConfigError(display_name, line, "", msg);
  }
}

std::string read_input_file(const std::string& path, const std::string& what) {
  const std::uint64_t size = check_input_file(path, what, kMaxInputFileBytes);
  // open/read rather than an ifstream: every start reads the scenario and the catalogs, and the
  // stream's set-up (locale, buffer) cost more than the reading.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ConfigError(path, 0, "", "cannot open " + what + " (permission denied?)");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Read to the end in pieces and stop past the limit: the size on disk may change between stat
  // and read. One byte more than the stat size finds the end in the first read.
  std::string text;
  std::size_t used = 0;
  text.resize(static_cast<std::size_t>(size) + 1);
  while (true) {
    if (used == text.size())
      text.resize(std::min<std::size_t>(text.size() * 2, kMaxInputFileBytes + 1));
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ConfigError(path, 0, "", "error reading " + what);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > kMaxInputFileBytes)
      throw ConfigError(path, 0, "",
                        what + " is larger than the limit of " +
                            std::to_string(kMaxInputFileBytes >> 20) + " MiB for such files");
  }
  text.resize(used);
  strip_utf8_bom(text);
  return text;
}

YNode parse_yaml_file(const std::string& path, const std::string& what) {
  return parse_yaml_text(read_input_file(path, what), path);
}

std::optional<std::string> read_text_file(const std::string& path) {
  try {
    return read_input_file(path, "file");
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = to_lower(word);
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::string lc = to_lower(c);
    std::size_t d = edit_distance(w, lc);
    // A prefix match ("A100" for "A100-40GB") is a likely intent even when the distance is large.
    if (!w.empty() && lc.rfind(w, 0) == 0) d = std::min<std::size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Allow roughly one typo per three characters, at least two.
  const std::size_t limit = std::max<std::size_t>(2, w.size() / 3);
  return best_d <= limit ? best : std::string();
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string n = nearest(word, candidates);
  return n.empty() ? std::string() : " (did you mean '" + n + "'?)";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : std::string()) + items[i];
  return out;
}

std::string to_lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<double> parse_size(const std::string& text) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t pos = s.size();
  while (pos > 0 && std::isalpha(static_cast<unsigned char>(s[pos - 1]))) --pos;
  std::string unit = s.substr(pos);
  std::string number = s.substr(0, pos);
  while (!number.empty() && std::isspace(static_cast<unsigned char>(number.back())))
    number.pop_back();
  auto v = parse_double(number);
  if (!v) return std::nullopt;
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1.0},         {"B", 1.0},           {"KB", 1e3},         {"MB", 1e6},
      {"GB", 1e9},       {"TB", 1e12},         {"K", 1024.0},       {"M", 1024.0 * 1024},
      {"G", 1024.0 * 1024 * 1024},             {"KiB", 1024.0},     {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},           {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  // Units are matched case-insensitively except that the 'i' of binary units decides the base.
  for (const auto& [name, factor] : kUnits) {
    if (to_lower(unit) == to_lower(name)) {
      const double bytes = *v * factor;  // "1e300GB" overflows to inf
      return std::isfinite(bytes) ? std::optional<double>(bytes) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> parse_duration_s(const std::string& text) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t pos = s.size();
  while (pos > 0 && std::isalpha(static_cast<unsigned char>(s[pos - 1]))) --pos;
  const std::string unit = to_lower(s.substr(pos));
  std::string number = s.substr(0, pos);
  while (!number.empty() && std::isspace(static_cast<unsigned char>(number.back())))
    number.pop_back();
  auto v = parse_double(number);
  if (!v || unit.empty()) return std::nullopt;
  static const std::pair<const char*, double> kUnits[] = {
      {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"min", 60.0}, {"h", 3600.0}};
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return *v * factor;
  return std::nullopt;
}

std::string format_number(double value) { return format::exact(value); }

}  // namespace tiersim::config
