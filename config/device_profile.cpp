// Reading and writing device profiles (see device_profile.hpp for the format).
#include "config/device_profile.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config/yaml_reader.hpp"
#include "model/errors.hpp"
#include "common/format.hpp"

namespace tiersim {

namespace {

// Where a node came from, for error messages. yaml-cpp lines are 0-based; ours are 1-based.
int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

class ProfileReader {
 public:
  explicit ProfileReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& message) const {
    throw ConfigError(path_, line_of(node), key, message);
  }

  // Rejects keys the format does not define: a typo must not silently fall back to a default.
  void check_keys(const YAML::Node& map, const std::string& where,
                  const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, where, "expected a mapping");
    // A profile path may name any file (say /etc/shadow). Its text is repeated in a message only
    // once the file has shown itself to be a profile (a known top-level key): otherwise the
    // message names the line, never the content.
    bool known = !where.empty();
    for (const auto& kv : map)
      known = known || (kv.first.IsScalar() && allowed.count(kv.first.Scalar()));
    std::string valid;
    for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
    for (const auto& kv : map) {
      if (kv.first.IsScalar() && allowed.count(kv.first.Scalar())) continue;
      if (!kv.first.IsScalar()) fail(kv.first, where, "expected a key name, got a list or map");
      if (!known)
        fail(kv.first, where,
             "not a device profile: unknown top-level key (valid keys: " + valid + ")");
      const std::string key = kv.first.Scalar();
      fail(kv.first, where.empty() ? key : where + "." + key,
           "unknown key (valid keys: " + valid + ")");
    }
  }

  const YAML::Node required(const YAML::Node& map, const std::string& where,
                            const std::string& key) const {
    const YAML::Node node = map[key];
    if (!node) fail(map, where.empty() ? key : where + "." + key, "missing required key");
    return node;
  }

  double number(const YAML::Node& node, const std::string& key, double min_exclusive_or_eq,
                bool strictly_positive) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    double value = 0;
    try {
      value = node.as<double>();
    } catch (const YAML::Exception&) {
      fail(node, key, "expected a number");
    }
    if (!std::isfinite(value)) fail(node, key, "must be finite");
    if (strictly_positive ? !(value > min_exclusive_or_eq) : value < min_exclusive_or_eq) {
      std::ostringstream os;
      os << "must be " << (strictly_positive ? "> " : ">= ") << min_exclusive_or_eq << ", got "
         << value;
      fail(node, key, os.str());
    }
    return value;
  }

  std::string text(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected text");
    return node.Scalar();
  }

  int count(const YAML::Node& node, const std::string& key) const {
    const double v = number(node, key, 0, false);
    if (v != std::floor(v) || v > 1e9) fail(node, key, "expected a whole number");
    return static_cast<int>(v);
  }

  SsdDirectionModel direction(const YAML::Node& map, const std::string& where) const {
    check_keys(map, where, {"peak_gbps", "io_overhead_us", "latency_us", "stream_gbps"});
    SsdDirectionModel m;
    m.peak_gbps = number(required(map, where, "peak_gbps"), where + ".peak_gbps", 0, true);
    auto optional = [&](const char* key, double& out) {
      if (const YAML::Node n = map[key]) out = number(n, where + "." + key, 0, false);
    };
    optional("io_overhead_us", m.io_overhead_us);
    optional("latency_us", m.latency_us);
    optional("stream_gbps", m.stream_gbps);
    return m;
  }

  DeviceProfileProvenance provenance(const YAML::Node& map) const {
    check_keys(map, "measured",
               {"date", "host", "kernel", "filesystem", "device", "targets", "engine",
                "tool_version"});
    DeviceProfileProvenance p;
    auto optional = [&](const char* key, std::string& out) {
      if (const YAML::Node n = map[key]) out = text(n, std::string("measured.") + key);
    };
    optional("date", p.date);
    optional("host", p.host);
    optional("kernel", p.kernel);
    optional("filesystem", p.filesystem);
    optional("device", p.device);
    optional("engine", p.engine);
    optional("tool_version", p.tool_version);
    if (const YAML::Node t = map["targets"]) {
      if (!t.IsSequence()) fail(t, "measured.targets", "expected a list of paths");
      for (const auto& item : t) p.targets.push_back(text(item, "measured.targets"));
    }
    return p;
  }

  DeviceProfileFit fit(const YAML::Node& map) const {
    check_keys(map, "fit",
               {"points", "heldout_points", "read_fit_error_pct", "read_heldout_error_pct",
                "write_fit_error_pct", "write_heldout_error_pct"});
    DeviceProfileFit f;
    if (const YAML::Node n = map["points"]) f.points = count(n, "fit.points");
    if (const YAML::Node n = map["heldout_points"]) f.heldout_points = count(n, "fit.heldout_points");
    auto optional = [&](const char* key, double& out) {
      if (const YAML::Node n = map[key]) out = number(n, std::string("fit.") + key, 0, false);
    };
    optional("read_fit_error_pct", f.read_fit_error_pct);
    optional("read_heldout_error_pct", f.read_heldout_error_pct);
    optional("write_fit_error_pct", f.write_fit_error_pct);
    optional("write_heldout_error_pct", f.write_heldout_error_pct);
    return f;
  }

  void mixed(const YAML::Node& map, DeviceProfile& p) const {
    check_keys(map, "mixed", {"interference", "points", "fit_error_pct", "read_latency_error_pct"});
    // Below -1 the shared time of an even mix would be negative (model/ssd_model.hpp).
    p.model.mix_interference =
        number(required(map, "mixed", "interference"), "mixed.interference", -1, false);
    if (const YAML::Node n = map["points"]) p.fit.mixed_points = count(n, "mixed.points");
    if (const YAML::Node n = map["fit_error_pct"])
      p.fit.mixed_fit_error_pct = number(n, "mixed.fit_error_pct", 0, false);
    if (const YAML::Node n = map["read_latency_error_pct"])
      p.fit.mixed_read_latency_error_pct = number(n, "mixed.read_latency_error_pct", 0, false);
  }

  DeviceProfile read() const {
    return read(config::parse_yaml_text(config::read_input_file(path_, "device profile"), path_).raw());
  }

  DeviceProfile read(const YAML::Node& root) const {
    if (!root || root.IsNull()) throw ConfigError(path_, 0, "", "empty device profile");
    check_keys(root, "",
               {"name", "measured", "read", "write", "fit", "mixed", "warnings", "catalog_drive"});
    DeviceProfile p;
    p.model.name = text(required(root, "", "name"), "name");
    p.model.read = direction(required(root, "", "read"), "read");
    p.model.write = direction(required(root, "", "write"), "write");
    if (const YAML::Node m = root["measured"]) p.measured = provenance(m);
    if (const YAML::Node f = root["fit"]) p.fit = fit(f);
    if (const YAML::Node x = root["mixed"]) mixed(x, p);
    if (const YAML::Node w = root["warnings"]) {
      if (!w.IsSequence()) fail(w, "warnings", "expected a list of texts");
      for (const auto& item : w) p.warnings.push_back(text(item, "warnings"));
    }
    if (const YAML::Node d = root["catalog_drive"]) {
      p.catalog_drive = text(d, "catalog_drive");
      p.catalog_drive_line = d.Mark().line >= 0 ? d.Mark().line + 1 : 0;
    }
    return p;
  }

 private:
  std::string path_;
};

// Double-quoted YAML scalar: host names and paths may contain ':' or '#', which plain scalars
// cannot.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Seven significant digits: far below measurement noise, short enough to read.
std::string num(double v) { return format::significant(v, 7); }

std::string direction_line(const SsdDirectionModel& m) {
  return "{peak_gbps: " + num(m.peak_gbps) + ", io_overhead_us: " + num(m.io_overhead_us) +
         ", latency_us: " + num(m.latency_us) + ", stream_gbps: " + num(m.stream_gbps) + "}";
}

}  // namespace

DeviceProfile read_device_profile(const std::string& path) {
  try {
    return ProfileReader(path).read();
  } catch (const YAML::Exception& e) {
    // Conversion errors that escaped the checks above still name the file and line.
    throw ConfigError(path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg);
  }
}

DeviceProfile read_device_profile(const config::YNode& root, const std::string& path) {
  try {
    return ProfileReader(path).read(root.raw());
  } catch (const YAML::Exception& e) {
    throw ConfigError(path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg);
  }
}

SsdModel load_device_profile(const std::string& path) { return read_device_profile(path).model; }

void check_device_profile_output(const std::string& path, const OutputOptions& output) {
  check_output_file(path, "device profile", output);
  const std::filesystem::path folder = std::filesystem::path(path).has_parent_path()
                                           ? std::filesystem::path(path).parent_path()
                                           : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw IoError("will not write device profile '" + path + "': its folder '" + folder.string() +
                  "' does not exist");
}

void write_device_profile(const std::string& path, const DeviceProfile& profile,
                          const OutputOptions& output) {
  const auto& m = profile.measured;
  const auto& f = profile.fit;
  std::ostringstream os;
  os << "# tiersim device profile (written by tiersim calibrate)\n";
  os << "name: " << quoted(profile.model.name) << "\n";
  os << "measured: {date: " << quoted(m.date) << ", host: " << quoted(m.host)
     << ", kernel: " << quoted(m.kernel) << ", filesystem: " << quoted(m.filesystem)
     << ", device: " << quoted(m.device) << ", targets: [";
  for (std::size_t i = 0; i < m.targets.size(); ++i) os << (i ? ", " : "") << quoted(m.targets[i]);
  os << "], engine: " << quoted(m.engine) << ", tool_version: " << quoted(m.tool_version) << "}\n";
  os << "read:  " << direction_line(profile.model.read) << "\n";
  os << "write: " << direction_line(profile.model.write) << "\n";
  os << "fit:   {points: " << f.points << ", heldout_points: " << f.heldout_points
     << ", read_fit_error_pct: " << num(f.read_fit_error_pct)
     << ", read_heldout_error_pct: " << num(f.read_heldout_error_pct)
     << ", write_fit_error_pct: " << num(f.write_fit_error_pct)
     << ", write_heldout_error_pct: " << num(f.write_heldout_error_pct) << "}\n";
  if (f.mixed_points > 0)
    os << "mixed: {interference: " << num(profile.model.mix_interference)
       << ", points: " << f.mixed_points << ", fit_error_pct: " << num(f.mixed_fit_error_pct)
       << ", read_latency_error_pct: " << num(f.mixed_read_latency_error_pct) << "}\n";
  if (!profile.catalog_drive.empty())
    os << "catalog_drive: " << quoted(profile.catalog_drive) << "\n";
  if (!profile.warnings.empty()) {
    os << "warnings:\n";
    for (const auto& w : profile.warnings) os << "  - " << quoted(w) << "\n";
  }

  write_output_file(path, os.str(), "device profile", output);
}

}  // namespace tiersim
