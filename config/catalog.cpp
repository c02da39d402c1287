#include "config/catalog.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <memory>
#include <mutex>
#include <cstdlib>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "config/hf_config.hpp"
#include "config/scenario_loader.hpp"
#include "config/spec_fields.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"

#ifndef TIERSIM_DATA_DIR
#define TIERSIM_DATA_DIR "scenarios"
#endif

namespace tiersim::config {

namespace {

// Reads one catalog file: `top_key:` holding a list of entries whose keys are `name`, the spec's
// fields and `sources`.
template <class T>
std::vector<T> read_specs(const YNode& root, const std::string& top_key,
                          const std::vector<SpecField<T>>& fields) {
  if (root.is_null()) root.fail("empty catalog file (expected '" + top_key + ":' with a list)");
  root.check_keys({top_key});
  std::vector<std::string> valid = {"name"};
  std::vector<std::string> field_names;
  for (const auto& f : fields) field_names.push_back(f.name);
  valid.insert(valid.end(), field_names.begin(), field_names.end());
  valid.push_back("sources");

  std::vector<T> out;
  std::set<std::string> seen;
  for (const YNode& entry : root.require(top_key, "a list of entries").items()) {
    entry.check_keys(valid);
    // The entry's keys once (entries() also rejects duplicate keys), rather than a get() per
    // field: each get() walks and copies the whole map, which made reading the catalogs
    // quadratic in the number of fields.
    const auto keys = entry.entries();
    auto get = [&keys](const std::string& key) -> const YNode* {
      for (const auto& [k, v] : keys)
        if (k == key) return &v;
      return nullptr;
    };
    T spec;
    const YNode* name_node = get("name");
    if (!name_node) entry.fail_missing("name", "the entry's name");
    spec.name = name_node->as_string();
    if (!seen.insert(to_lower(spec.name)).second)
      name_node->fail("duplicate name '" + spec.name + "' (names are case-insensitive)");
    if (const YNode* src = get("sources")) {
      src->check_keys(field_names);
      for (auto& [key, text] : src->entries()) spec.sources[key] = text.as_string();
    }
    for (const auto& f : fields) {
      const YNode* node = get(f.name);
      if (!node) continue;
      read_field(*node, f, spec);
      // Every number must say where it came from; that is the point of the catalog.
      if (field_is_numeric(f) && !spec.sources.count(f.name))
        node->fail("no source given; add '" + std::string(f.name) +
                   ": \"<where this number comes from>\"' to the entry's sources (start it with "
                   "'estimate' for a derived value)");
    }
    out.push_back(std::move(spec));
  }
  return out;
}

PriceQuote read_quote(const YNode& node) {
  PriceQuote q;
  q.usd = node.require("usd", "a price in US dollars").as_double(0, kNoLimit);
  if (auto d = node.get("date")) q.date = d->as_string();
  q.source = node.require("source", "where the price comes from").as_string();
  return q;
}

std::vector<PriceEntry> read_prices(const YNode& list, const std::vector<std::string>& known,
                                    const std::string& what) {
  std::vector<PriceEntry> out;
  std::set<std::string> seen;
  for (const YNode& item : list.items()) {
    item.check_keys({"name", "usd", "date", "source"});
    const YNode name_node = item.require("name", "the " + what + "'s catalog name");
    PriceEntry e{name_node.as_string(), read_quote(item)};
    // A price for a name no catalog defines would silently never be used: make the typo loud.
    bool found = false;
    for (const auto& k : known) found = found || to_lower(k) == to_lower(e.name);
    if (!found)
      name_node.fail("no " + what + " named '" + e.name + "' in the catalog" +
                     did_you_mean(e.name, known) + "; valid: " + join(known));
    if (!seen.insert(to_lower(e.name)).second) name_node.fail("duplicate price entry");
    out.push_back(std::move(e));
  }
  return out;
}

template <class T>
std::vector<std::string> names_of(const std::vector<T>& v);

// A catalog model given as `hf_config: hf/<file>.json` (relative to the catalog folder): the
// architecture is the file's; the entry adds only its name and the published size it is checked
// against. An entry giving both a file and architecture fields would have two sources for one
// number, so that is an error.
LlmSpec model_from_hf_config(const LlmSpec& entry, const YNode& root, const std::string& dir) {
  const YNode* node = nullptr;
  std::optional<YNode> found;
  for (const YNode& e : root.require("models", "a list of entries").items())
    if (auto n = e.get("name"); n && n->as_string() == entry.name) found = e;
  node = &*found;
  for (const auto& f : llm_fields()) {
    const std::string key = f.name;
    if (key == "hf_config" || key == "published_params_b") continue;
    if (auto v = node->get(key))
      v->fail("the entry reads its architecture from hf_config; remove '" + key +
              "' (or edit the config file)");
  }
  const std::string rel = entry.hf_config;
  LlmSpec m;
  try {
    m = read_hf_config(dir + "/" + rel);
  } catch (const ConfigError& e) {
    node->get("hf_config")->fail(e.what());
  }
  m.name = entry.name;
  m.hf_config = rel;
  m.published_params_b = entry.published_params_b;
  for (const auto& [k, v] : entry.sources)
    if (k == "published_params_b" || k == "hf_config") m.sources[k] = v;
  // Sources name the file as the catalog names it, not by this machine's path: every mention (a
  // source built from two keys, as shared_ffn's "n_shared_experts x moe_intermediate_size",
  // names it twice; the snapshot, made from another folder, differed there).
  const std::string relative = "hf_config ", absolute = relative + dir + "/";
  for (auto& [k, v] : m.sources.edit())
    for (auto at = v.find(absolute); at != std::string::npos; at = v.find(absolute, at)) {
      v.replace(at, absolute.size(), relative);
      at += relative.size();
    }
  return m;
}

// GPUs that have no achieved-rate measurement of their own name a measured sibling of their
// generation (`rates_from`) and take its achieved fraction of the peak, scaled to their own
// peak: an H100 PCIe (756 dense TFLOPS) inheriting from an H100 SXM that reached 0.78 of 989
// runs its GEMMs at 0.78 x 756, not at the SXM's absolute rate. The L2 re-read rate, the FP8
// rate, the FP4 rate and the GEMMs' exposed weight-load rates scale the same way (all grow with SMs
// x clock). The shares a power limit leaves of the rates (fp16_power_limited_share) are not
// inherited: they belong to a board and its limit. Each inherited value's source says where it
// came from.
void inherit_rates(std::vector<GpuSpec>& gpus, const YNode& root) {
  auto entry_node = [&root](const std::string& name) {
    for (const YNode& e : root.require("gpus", "a list of entries").items())
      if (auto n = e.get("name"); n && n->as_string() == name) return *e.get("rates_from");
    return root;
  };
  for (GpuSpec& g : gpus) {
    if (g.rates_from.empty()) continue;
    const GpuSpec* from = nullptr;
    for (const GpuSpec& o : gpus)
      if (to_lower(o.name) == to_lower(g.rates_from)) from = &o;
    const YNode node = entry_node(g.name);
    if (!from) node.fail("no GPU named '" + g.rates_from + "' in the catalog" +
                         did_you_mean(g.rates_from, names_of(gpus)));
    if (from == &g || !from->rates_from.empty())
      node.fail("'" + g.rates_from + "' must be a GPU with its own measured rates (no rates_from)");
    if (from->arch != g.arch)
      node.fail("'" + from->name + "' is a " + from->arch + " GPU; rates are inherited within a "
                "generation (this entry is " + g.arch + ")");
    const double scale = g.fp16_tflops / from->fp16_tflops;
    auto inherit = [&](double GpuSpec::*field, const char* key) {
      if (g.*field >= 0 || from->*field < 0) return;  // its own value, or nothing to inherit
      g.*field = from->*field * scale;
      const auto src = from->sources.find(key);
      g.sources[key] = "inherited from " + from->name + " (rates_from), scaled by fp16_tflops " +
                       format_number(g.fp16_tflops) + "/" + format_number(from->fp16_tflops) +
                       (src == from->sources.end() ? std::string() : ": " + src->second);
    };
    inherit(&GpuSpec::fp16_achieved_tflops, "fp16_achieved_tflops");
    inherit(&GpuSpec::fp16_decode_achieved_tflops, "fp16_decode_achieved_tflops");
    inherit(&GpuSpec::l2_shared_read_gbps, "l2_shared_read_gbps");
    inherit(&GpuSpec::fp8_achieved_tflops, "fp8_achieved_tflops");
    inherit(&GpuSpec::fp4_achieved_tflops, "fp4_achieved_tflops");
    inherit(&GpuSpec::gemm_exposed_weight_gbps, "gemm_exposed_weight_gbps");
    inherit(&GpuSpec::fp8_gemm_exposed_weight_gbps, "fp8_gemm_exposed_weight_gbps");
  }
}

// prices.yaml `cloud`: instances rented by the hour, each holding `gpus` catalog GPUs.
std::vector<CloudInstance> read_cloud(const YNode& list, const std::vector<std::string>& gpus) {
  std::vector<CloudInstance> out;
  std::set<std::string> seen;
  for (const YNode& item : list.items()) {
    item.check_keys({"name", "gpu", "gpus", "usd_per_hour", "date", "source"});
    CloudInstance c;
    const YNode name_node = item.require("name", "the instance's name");
    c.name = name_node.as_string();
    if (!seen.insert(to_lower(c.name)).second) name_node.fail("duplicate cloud instance");
    const YNode gpu_node = item.require("gpu", "the GPU's catalog name");
    c.gpu = gpu_node.as_string();
    bool found = false;
    for (const auto& g : gpus) found = found || to_lower(g) == to_lower(c.gpu);
    if (!found)
      gpu_node.fail("no GPU named '" + c.gpu + "' in the catalog" + did_you_mean(c.gpu, gpus) +
                    "; valid: " + join(gpus));
    c.gpus = static_cast<int>(item.require("gpus", "GPUs per instance").as_int(1, 1024));
    c.hourly.usd = item.require("usd_per_hour", "on-demand USD per instance-hour")
                       .as_double(0, kNoLimit);
    c.hourly.date = item.require("date", "when the price was read").as_string();
    c.hourly.source = item.require("source", "the price page it was read from").as_string();
    out.push_back(std::move(c));
  }
  return out;
}

template <class T>
std::vector<std::string> names_of(const std::vector<T>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.name);
  return out;
}

// An unknown name: the error lists the valid ones.
[[noreturn]] void fail_unknown(const std::vector<std::string>& names, const std::string& name,
                               const std::string& what, const std::string& file) {
  throw CatalogError("unknown " + what + " '" + name + "'" + did_you_mean(name, names) +
                     "; valid: " + join(names) + " (catalog " + file + ")");
}

template <class T>
const T& find_named(const std::vector<T>& v, const std::string& name, const std::string& what,
                    const std::string& file) {
  for (const auto& x : v)
    if (to_lower(x.name) == to_lower(name)) return x;
  fail_unknown(names_of(v), name, what, file);
}

PriceQuote find_price(const std::vector<PriceEntry>& v, const std::string& name) {
  for (const auto& e : v)
    if (to_lower(e.name) == to_lower(name)) return e.quote;
  return PriceQuote{};
}

// The catalog files, in the order they are read.
constexpr const char* kFiles[] = {"gpus", "drives", "hosts", "models", "prices"};
constexpr std::size_t kFileCount = sizeof kFiles / sizeof kFiles[0];
using Texts = std::array<std::optional<std::string>, kFileCount>;

std::string catalog_dir(const std::string& data_dir) {
  return (data_dir.empty() ? default_data_dir() : data_dir) + "/catalog";
}

Texts read_texts(const std::string& dir) {
  Texts texts;
  for (std::size_t i = 0; i < kFileCount; ++i)
    texts[i] = read_text_file(dir + "/" + kFiles[i] + ".yaml");
  return texts;
}

// The names of the config.json files catalog models may point to (catalog/hf/*.json), sorted:
// they are part of what the snapshot was made from. opendir rather than std::filesystem: every
// start lists this folder, and the paths cost more than the listing.
std::vector<std::string> hf_files(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir((dir + "/hf").c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    // "x.json", as std::filesystem's extension() reads it: ".json" alone is a hidden file.
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The snapshot's key: every file's name and text as the pieces of one string, in order (each
// config.json's name and text, then each catalog file's name, size and text). `literal` gets the
// names, sizes and separators; `file(path, catalog)` the text of one file (`catalog`: the index
// in kFiles of a catalog file, whose text comes after its size; -1 for a config.json, which an
// unreadable one leaves as "<unreadable>"). Either returns false to stop; then so does this.
template <class Literal, class File>
bool each_text_piece(const std::string& dir, Literal&& literal, File&& file) {
  static constexpr std::string_view kNul("\0", 1);
  for (const std::string& name : hf_files(dir))
    if (!literal(name) || !literal(kNul) || !file(dir + "/hf/" + name, -1) || !literal(kNul))
      return false;
  for (std::size_t i = 0; i < kFileCount; ++i)
    if (!literal(kFiles[i]) || !literal(kNul) ||
        !file(dir + "/" + kFiles[i] + ".yaml", static_cast<int>(i)))
      return false;
  return true;
}

// Every file's name and text, in one string ("" when a catalog file cannot be read).
std::string all_texts(const Texts& texts, const std::string& dir) {
  std::string all;
  std::size_t size = 0;
  for (const auto& t : texts) size += t ? t->size() + 32 : 0;
  all.reserve(size);
  const auto literal = [&all](std::string_view p) {
    all += p;
    return true;
  };
  const bool whole = each_text_piece(dir, literal, [&](const std::string& path, int catalog) {
    if (catalog < 0) {
      const auto text = read_text_file(path);
      all += text ? *text : std::string_view("<unreadable>");
      return true;
    }
    const auto& text = texts[static_cast<std::size_t>(catalog)];
    if (!text) return false;
    all += std::to_string(text->size());
    all += '\0';
    all += *text;
    return true;
  });
  return whole ? all : std::string();
}

// True when the files in `dir` are byte for byte those the snapshot was made from: all_texts of
// them would equal `expected`. Every start asks, so each file is compared with its part of
// `expected` as it is read, through one small buffer: reading the catalogs (over 100 kB) into
// strings and joining them into another was most of a start's catalog cost, in page faults as
// much as in copying. Anything unexpected (a file that changed while read, a read error) answers
// false, and the files are then parsed, which reports what is wrong with them.
bool files_match(const std::string& dir, std::string_view expected) {
  std::size_t at = 0;
  const auto literal = [&](std::string_view p) {
    if (expected.substr(at, p.size()) != p) return false;
    at += p.size();
    return true;
  };
  const auto file = [&](const std::string& path, int catalog) {
    // What read_input_file reads: a regular file within the size limit, its BOM stripped.
    std::uint64_t size = 0;
    try {
      size = check_input_file(path, "file", kMaxInputFileBytes);
    } catch (const ConfigError&) {
      return catalog < 0 && literal("<unreadable>");
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return catalog < 0 && literal("<unreadable>");
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    char buf[16384];
    std::uint64_t total = 0;
    bool first = true;
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      if (n == 0) break;
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      total += chunk.size();
      if (first) {
        first = false;
        // Short first reads are not expected from a regular file; a BOM split by one is simply
        // compared as text (and so does not match).
        const bool bom = chunk.substr(0, 3) == "\xEF\xBB\xBF";
        if (bom) chunk.remove_prefix(3);
        if (catalog >= 0 &&
            (!literal(std::to_string(size - (bom ? 3 : 0))) || !literal(std::string_view("\0", 1))))
          return false;
      }
      if (!literal(chunk)) return false;
    }
    if (first && catalog >= 0 && (!literal("0") || !literal(std::string_view("\0", 1))))
      return false;
    return total == size;  // else it changed between stat and read
  };
  return each_text_piece(dir, literal, file) && at == expected.size();
}

std::string hash_texts(const Texts& texts, const std::string& dir) {
  const std::string all = all_texts(texts, dir);
  return all.empty() ? "" : stable_hash(all);
}

// File i parsed; an unreadable file fails here, when its turn comes, as parse_yaml_file would.
YNode parse_file(const Texts& texts, const std::string& dir, std::size_t i) {
  const std::string path = dir + "/" + kFiles[i] + ".yaml";
  // Unreadable: read it again for the reason (missing, a directory, too large, ...).
  if (!texts[i]) read_input_file(path, "catalog file");
  return parse_yaml_text(*texts[i], path);
}

// Length-prefixed fields ("5:hello"), so that any text (newlines, colons) survives unchanged.
class TextWriter {
 public:
  void put(std::string_view v) {
    out_ += std::to_string(v.size());
    out_ += ':';
    out_.append(v);
  }
  void count(std::size_t n) { put(std::to_string(n)); }
  void quote(const PriceQuote& q) {
    put(format_number(q.usd));
    put(q.date);
    put(q.source);
  }
  template <class T>
  void specs(const std::vector<T>& v, const std::vector<SpecField<T>>& fields) {
    count(v.size());
    for (const T& spec : v) {
      put(spec.name);
      // The rest of the entry as one field, so that a reader indexing the entries passes over
      // each with one read (every start indexes the four lists; it read every field of each).
      TextWriter body;
      body.count(spec.sources.size());
      for (const auto& [key, text] : spec.sources) {
        body.put(key);
        body.put(text);
      }
      // field_text is canonical: reading it back gives the same value, bit for bit.
      for (const auto& f : fields) body.put(field_text(f, spec));
      put(body.out_);
    }
  }
  void prices(const std::vector<PriceEntry>& v) {
    count(v.size());
    for (const auto& e : v) {
      put(e.name);
      quote(e.quote);
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class TextReader {
 public:
  explicit TextReader(std::string_view text, std::size_t pos = 0) : text_(text), pos_(pos) {}
  std::size_t pos() const { return pos_; }
  std::string_view get() {
    const auto colon = text_.find(':', pos_);
    std::size_t len = 0;
    const auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + colon, len);
    if (colon == std::string_view::npos || ec != std::errc() || ptr != text_.data() + colon ||
        len > text_.size() - colon - 1)
      throw ConfigError("built-in catalog snapshot", 0, "",
                        "malformed at offset " + std::to_string(pos_));
    pos_ = colon + 1 + len;
    return text_.substr(colon + 1, len);
  }
  std::string text() { return std::string(get()); }
  double number() {
    const std::string_view t = get();
    double v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || ptr != t.data() + t.size())
      throw ConfigError("built-in catalog snapshot", 0, "", "malformed number");
    return v;
  }
  std::size_t count() { return static_cast<std::size_t>(number()); }
  PriceQuote quote() {
    PriceQuote q;
    q.usd = number();
    q.date = text();
    q.source = text();
    return q;
  }
  template <class T>
  std::vector<T> specs(const std::vector<SpecField<T>>& fields) {
    std::vector<T> out(count());
    for (T& spec : out) spec = this->spec(fields);
    return out;
  }
  template <class T>
  T spec(const std::vector<SpecField<T>>& fields) {
    T spec;
    spec.name = text();
    TextReader body(get());
    // Written from the map in key order: each entry goes at the end, without a search (an
    // out-of-order one, which the writer never makes, still lands where it belongs).
    SourceMap::Map& sources = spec.sources.edit();
    for (std::size_t n = body.count(); n > 0; --n) {
      std::string key = body.text();
      std::string value = body.text();
      sources.insert_or_assign(sources.end(), std::move(key), std::move(value));
    }
    for (const auto& f : fields) body.set_field(f, spec);
    if (!body.at_end())
      throw ConfigError("built-in catalog snapshot", 0, "", "trailing data in '" + spec.name + "'");
    return spec;
  }
  // Passes over one entry written by TextWriter::specs, returning its name.
  std::string_view skip_spec() {
    const std::string_view name = get();
    get();
    return name;
  }
  // The inverse of field_text. No range checks: the value passed them when the snapshot was
  // made, and a field the catalog left out holds the struct's default, which may lie outside.
  template <class T>
  void set_field(const SpecField<T>& f, T& spec) {
    std::visit(
        [&](auto m) {
          using M = decltype(m);
          if constexpr (std::is_same_v<M, double T::*>)
            spec.*m = number();
          else if constexpr (std::is_same_v<M, int T::*>)
            spec.*m = static_cast<int>(number());
          else if constexpr (std::is_same_v<M, bool T::*>)
            spec.*m = get() == "true";
          else if constexpr (std::is_same_v<M, std::string T::*>)
            spec.*m = text();
          else
            spec.*m = get() == "gated" ? FfnKind::kGated : FfnKind::kMlp;
        },
        f.member);
  }
  std::vector<PriceEntry> prices() {
    std::vector<PriceEntry> out(count());
    for (auto& e : out) {
      e.name = text();
      e.quote = quote();
    }
    return out;
  }
  bool at_end() const { return pos_ == text_.size(); }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// One list of the built-in snapshot: where each entry is written, and the entries decoded so far.
template <class T>
struct LazyList {
  std::vector<std::string> names;                  // in catalog order
  std::vector<std::size_t> offsets;                // where each entry starts in the text
  std::vector<std::unique_ptr<const T>> decoded;   // null until asked for
  std::optional<std::vector<T>> all;               // every entry, once a command lists them

  // Notes each entry of a list written by TextWriter::specs.
  void index(TextReader& r) {
    const std::size_t n = r.count();
    names.reserve(n);
    offsets.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      offsets.push_back(r.pos());
      names.emplace_back(r.skip_spec());
    }
    decoded.resize(n);
  }
  // The entry named `name` (case-insensitive), decoded now if it was not yet; null if none.
  const T* find(std::string_view text, const std::vector<SpecField<T>>& fields,
                const std::string& name) {
    const std::string lower = to_lower(name);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (to_lower(names[i]) != lower) continue;
      if (!decoded[i]) {
        TextReader r(text, offsets[i]);
        decoded[i] = std::make_unique<const T>(r.spec(fields));
      }
      return decoded[i].get();
    }
    return nullptr;
  }
  const std::vector<T>& every(std::string_view text, const std::vector<SpecField<T>>& fields) {
    if (!all) {
      all.emplace();
      all->reserve(offsets.size());
      for (const std::size_t offset : offsets) {
        TextReader r(text, offset);
        all->push_back(r.spec(fields));
      }
    }
    return *all;
  }
};

}  // namespace

// A snapshot names a hundred-odd entries and a scenario uses four: decoding only those (and
// their sources) took the catalog's share of `tiersim run` from about 2 million instructions
// (decoding and then freeing every entry) to a tenth of that.
struct Catalog::Lazy {
  std::string_view text;
  std::shared_ptr<const std::string> owned;  // what `text` views, unless static (the snapshot)
  std::mutex mutex;  // catalogs are shared between a study's threads
  LazyList<GpuSpec> gpus;
  LazyList<NvmeSpec> drives;
  LazyList<HostSpec> hosts;
  LazyList<LlmSpec> models;

  // One kind of entry (GPUs, hosts, drives, models): where a parsed catalog keeps every entry,
  // where the snapshot's are noted, their fields, what an error calls one, and its catalog file.
  template <class T>
  struct Kind {
    std::vector<T> Catalog::*parsed;
    LazyList<T> Lazy::*snapshot;
    const std::vector<SpecField<T>>& (*fields)();
    const char* what;
    const char* file;
  };
  static const Kind<GpuSpec> kGpus;
  static const Kind<HostSpec> kHosts;
  static const Kind<NvmeSpec> kDrives;
  static const Kind<LlmSpec> kModels;

  // Every entry of a kind in `c`, in catalog order (see Catalog::gpus()).
  template <class T>
  static const std::vector<T>& every(const Catalog& c, const Kind<T>& kind) {
    if (!c.lazy_) return c.*kind.parsed;
    Lazy& lazy = *c.lazy_;
    std::lock_guard<std::mutex> lock(lazy.mutex);
    return (lazy.*kind.snapshot).every(lazy.text, kind.fields());
  }
  // The entry `name` (case-insensitive) of a kind in `c`, from the snapshot decoded at its first
  // use; an unknown name fails listing the valid ones (fail_unknown).
  template <class T>
  static const T& find(const Catalog& c, const Kind<T>& kind, const std::string& name) {
    const std::string file = c.dir_ + "/" + kind.file;
    if (!c.lazy_) return find_named(c.*kind.parsed, name, kind.what, file);
    Lazy& lazy = *c.lazy_;
    std::lock_guard<std::mutex> lock(lazy.mutex);
    LazyList<T>& list = lazy.*kind.snapshot;
    if (const T* found = list.find(lazy.text, kind.fields(), name)) return *found;
    fail_unknown(list.names, name, kind.what, file);
  }
};

const Catalog::Lazy::Kind<GpuSpec> Catalog::Lazy::kGpus{&Catalog::gpus_, &Lazy::gpus, gpu_fields,
                                                        "GPU", "gpus.yaml"};
const Catalog::Lazy::Kind<HostSpec> Catalog::Lazy::kHosts{&Catalog::hosts_, &Lazy::hosts,
                                                          host_fields, "host", "hosts.yaml"};
const Catalog::Lazy::Kind<NvmeSpec> Catalog::Lazy::kDrives{&Catalog::drives_, &Lazy::drives,
                                                           drive_fields, "drive", "drives.yaml"};
const Catalog::Lazy::Kind<LlmSpec> Catalog::Lazy::kModels{&Catalog::models_, &Lazy::models,
                                                          llm_fields, "model", "models.yaml"};

std::string default_data_dir() {
  // Reading the environment is not mutable state of ours; it lets an installed binary or a test
  // point at another scenarios folder.
  if (const char* env = std::getenv("TIERSIM_DATA_DIR"); env && *env) return env;
  return TIERSIM_DATA_DIR;
}

Catalog Catalog::load(const std::string& data_dir) {
  const std::string dir = catalog_dir(data_dir);
  if (const CatalogSnapshot* snap = builtin_catalog_snapshot())
    if (files_match(dir, snap->texts)) return from_snapshot(snap->data, dir);
  return parse_texts(dir, read_texts(dir));
}

bool Catalog::matches_snapshot(const std::string& data_dir) {
  const CatalogSnapshot* snap = builtin_catalog_snapshot();
  return snap && files_match(catalog_dir(data_dir), snap->texts);
}

const Catalog& CatalogOnce::get() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!catalog_) catalog_.emplace(Catalog::load(data_dir_));
  return *catalog_;
}

Catalog Catalog::parse(const std::string& data_dir) {
  const std::string dir = catalog_dir(data_dir);
  return parse_texts(dir, read_texts(dir));
}

std::string Catalog::texts(const std::string& data_dir) {
  const std::string dir = catalog_dir(data_dir);
  return all_texts(read_texts(dir), dir);
}

std::string Catalog::texts_hash(const std::string& data_dir) {
  const std::string dir = catalog_dir(data_dir);
  return hash_texts(read_texts(dir), dir);
}

Catalog Catalog::parse_texts(const std::string& dir, const Texts& texts) {
  Catalog c;
  c.dir_ = dir;
  const YNode gpus_root = parse_file(texts, dir, 0);
  c.gpus_ = read_specs<GpuSpec>(gpus_root, "gpus", gpu_fields());
  for (const GpuSpec& g : c.gpus_) {
    try {
      gpu_arch_info(g.arch);
    } catch (const ModelError& e) {
      for (const YNode& entry : gpus_root.require("gpus", "a list of entries").items())
        if (auto n = entry.get("name"); n && n->as_string() == g.name) {
          if (auto a = entry.get("arch")) a->fail(e.what());
          entry.fail_missing("arch", "the GPU generation, one of: " + join(gpu_arch_names(), ", "));
        }
    }
  }
  inherit_rates(c.gpus_, gpus_root);
  c.drives_ = read_specs<NvmeSpec>(parse_file(texts, dir, 1), "drives", drive_fields());
  c.hosts_ = read_specs<HostSpec>(parse_file(texts, dir, 2), "hosts", host_fields());
  const YNode models_root = parse_file(texts, dir, 3);
  c.models_ = read_specs<LlmSpec>(models_root, "models", llm_fields());
  for (LlmSpec& m : c.models_)
    if (!m.hf_config.empty()) m = model_from_hf_config(m, models_root, dir);

  const YNode root = parse_file(texts, dir, 4);
  if (root.is_null()) root.fail("empty catalog file (expected 'prices:')");
  root.check_keys({"prices"});
  const YNode prices = root.require("prices", "a map of gpus, platforms, drives, dram_usd_per_gb");
  prices.check_keys({"gpus", "platforms", "drives", "dram_usd_per_gb", "cloud"});
  if (auto n = prices.get("gpus")) c.gpu_prices_ = read_prices(*n, names_of(c.gpus_), "GPU");
  if (auto n = prices.get("platforms"))
    c.platform_prices_ = read_prices(*n, names_of(c.hosts_), "host");
  if (auto n = prices.get("drives"))
    c.drive_prices_ = read_prices(*n, names_of(c.drives_), "drive");
  if (auto n = prices.get("dram_usd_per_gb")) {
    n->check_keys({"usd", "date", "source"});
    c.dram_per_gb_ = read_quote(*n);
  }
  if (auto n = prices.get("cloud")) c.cloud_ = read_cloud(*n, names_of(c.gpus_));
  return c;
}

std::string Catalog::to_text() const {
  TextWriter w;
  w.put("tiersim-catalog-3");
  w.specs(gpus(), gpu_fields());
  w.specs(drives(), drive_fields());
  w.specs(hosts(), host_fields());
  w.specs(models(), llm_fields());
  w.prices(gpu_prices_);
  w.prices(platform_prices_);
  w.prices(drive_prices_);
  w.quote(dram_per_gb_);
  w.count(cloud_.size());
  for (const auto& e : cloud_) {
    w.put(e.name);
    w.put(e.gpu);
    w.count(static_cast<std::size_t>(e.gpus));
    w.quote(e.hourly);
  }
  return w.take();
}

Catalog Catalog::from_text(std::string_view text, const std::string& dir) {
  // The built-in snapshot's reader: entries decode from the text at their first use, so the
  // catalog keeps its own copy of it.
  auto owned = std::make_shared<const std::string>(text);
  Catalog c = from_snapshot(*owned, dir);
  c.lazy_->owned = std::move(owned);
  return c;
}

Catalog Catalog::from_snapshot(std::string_view text, const std::string& dir) {
  TextReader r(text);
  if (r.get() != "tiersim-catalog-3")
    throw ConfigError("built-in catalog snapshot", 0, "", "unknown format");
  Catalog c;
  c.dir_ = dir;
  c.lazy_ = std::make_shared<Lazy>();
  Lazy& lazy = *c.lazy_;
  lazy.text = text;
  lazy.gpus.index(r);
  lazy.drives.index(r);
  lazy.hosts.index(r);
  lazy.models.index(r);
  c.gpu_prices_ = r.prices();
  c.platform_prices_ = r.prices();
  c.drive_prices_ = r.prices();
  c.dram_per_gb_ = r.quote();
  c.cloud_.resize(r.count());
  for (auto& e : c.cloud_) {
    e.name = r.text();
    e.gpu = r.text();
    e.gpus = static_cast<int>(r.count());
    e.hourly = r.quote();
  }
  if (!r.at_end()) throw ConfigError("built-in catalog snapshot", 0, "", "trailing data");
  return c;
}

const std::vector<GpuSpec>& Catalog::gpus() const {
  return Lazy::every(*this, Lazy::kGpus);
}
const std::vector<HostSpec>& Catalog::hosts() const {
  return Lazy::every(*this, Lazy::kHosts);
}
const std::vector<NvmeSpec>& Catalog::drives() const {
  return Lazy::every(*this, Lazy::kDrives);
}
const std::vector<LlmSpec>& Catalog::models() const {
  return Lazy::every(*this, Lazy::kModels);
}

const CloudInstance& Catalog::cloud_instance(const std::string& name) const {
  return find_named(cloud_, name, "cloud instance", dir_ + "/prices.yaml");
}

const GpuSpec& Catalog::gpu(const std::string& name) const {
  return Lazy::find(*this, Lazy::kGpus, name);
}
const HostSpec& Catalog::host(const std::string& name) const {
  return Lazy::find(*this, Lazy::kHosts, name);
}
const NvmeSpec& Catalog::drive(const std::string& name) const {
  return Lazy::find(*this, Lazy::kDrives, name);
}
const LlmSpec& Catalog::model(const std::string& name) const {
  return Lazy::find(*this, Lazy::kModels, name);
}

PriceQuote Catalog::gpu_price(const std::string& name) const {
  return find_price(gpu_prices_, name);
}
PriceQuote Catalog::platform_price(const std::string& host_name) const {
  return find_price(platform_prices_, host_name);
}
PriceQuote Catalog::drive_price(const std::string& name) const {
  return find_price(drive_prices_, name);
}

}  // namespace tiersim::config
