#include "config/yaml_writer.hpp"

#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace tiersim::config {
namespace {

enum class Context { kBlock, kFlow };

// True when yaml-cpp would write `s` plain in `context`: it is not one of the null spellings
// (which yaml-cpp quotes), starts with a letter, digit, '_', '.' or '/', and holds only letters,
// digits, spaces and "_./+-()=" (in block context also ',') with no trailing space. None of these
// characters can start a YAML indicator, end a plain scalar (':', and in flow context ",[]{}") or
// start a comment ('#'); a comma ends a plain scalar only in flow context (yaml-cpp's
// Exp::EndScalar against Exp::EndScalarInFlow). A scenario's description is the one scalar of a
// resolved scenario that usually holds a comma, and yaml-cpp's emitter took 1.5% of a sweep point.
// Which characters may stand where in such a scalar, by byte: bit 0 anywhere in flow context,
// bit 1 anywhere in block context, bit 2 first. One lookup a character (a resolved scenario
// writes about two thousand of them, for every point of a study).
constexpr std::array<unsigned char, 256> kPlainChars = [] {
  std::array<unsigned char, 256> t{};
  const auto set = [&](char c, unsigned char bits) {
    t[static_cast<unsigned char>(c)] =
        static_cast<unsigned char>(t[static_cast<unsigned char>(c)] | bits);
  };
  for (char c = 'a'; c <= 'z'; ++c) set(c, 7);
  for (char c = 'A'; c <= 'Z'; ++c) set(c, 7);
  for (char c = '0'; c <= '9'; ++c) set(c, 7);
  for (char c : std::string_view("_./")) set(c, 7);
  for (char c : std::string_view(" +-()=")) set(c, 3);
  set(',', 2);
  return t;
}();

bool always_plain(std::string_view s, Context context) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return false;
  if (s.size() > 256) return false;  // yaml-cpp writes long keys differently; leave it to yaml-cpp
  if (!(kPlainChars[static_cast<unsigned char>(s.front())] & 4)) return false;
  if (s.back() == ' ') return false;
  const unsigned char anywhere = context == Context::kBlock ? 2 : 1;
  for (char c : s)
    if (!(kPlainChars[static_cast<unsigned char>(c)] & anywhere)) return false;
  return true;
}

// yaml-cpp's own rendering of a scalar that may need quoting, in the given context, with one
// correction: yaml-cpp's emitter writes a carriage return plain, and its parser reads a trailing
// one as a line break, so "x\r" came back as "x" (found by the fuzz target: a scenario named "\r"
// resolved to a file that no longer loaded). A scalar holding '\r' is written double-quoted,
// where it is the escape "\r" and reads back exactly.
std::string yaml_cpp_scalar(std::string_view view, Context context) {
  const std::string s(view);
  YAML::Emitter out;
  const bool has_cr = s.find('\r') != std::string::npos;
  if (context == Context::kBlock) {
    if (has_cr) out << YAML::DoubleQuoted;
    out << s;
    return out.c_str();
  }
  out << YAML::Flow << YAML::BeginSeq;
  if (has_cr) out << YAML::DoubleQuoted;
  out << s << YAML::EndSeq;
  const std::string text = out.c_str();  // "[...]"
  return text.substr(1, text.size() - 2);
}

void scalar_text(std::string_view s, Context context, std::string& out) {
  if (always_plain(s, context))
    out += s;
  else
    out += yaml_cpp_scalar(s, context);
}

void scalar(const YAML::Node& n, Context context, std::string& out) {
  if (n.IsNull()) {
    out += '~';
    return;
  }
  scalar_text(n.Scalar(), context, out);
}

bool is_flow(const YAML::Node& n) {
  return (n.IsMap() || n.IsSequence()) && n.Style() == YAML::EmitterStyle::Flow;
}

// A collection written in flow style: "{a: 1, b: [x, y]}". Inside flow, every collection is flow.
bool flow(const YAML::Node& n, std::string& out) {
  if (n.IsMap()) {
    out += '{';
    bool first = true;
    for (const auto& kv : n) {
      if (!first) out += ", ";
      first = false;
      if (!kv.first.IsScalar()) return false;
      scalar(kv.first, Context::kFlow, out);
      out += ": ";
      if (!(kv.second.IsMap() || kv.second.IsSequence())) {
        if (!kv.second.IsScalar() && !kv.second.IsNull()) return false;
        scalar(kv.second, Context::kFlow, out);
      } else if (!flow(kv.second, out)) {
        return false;
      }
    }
    out += '}';
    return true;
  }
  if (n.IsSequence()) {
    out += '[';
    bool first = true;
    for (const auto& item : n) {
      if (!first) out += ", ";
      first = false;
      // yaml-cpp writes some collections inside a flow sequence with an extra space ("[ {}]");
      // tiersim writes none, so leave them to yaml-cpp.
      if (item.IsMap() || item.IsSequence()) {
        return false;
      } else {
        if (!item.IsScalar() && !item.IsNull()) return false;
        scalar(item, Context::kFlow, out);
      }
    }
    out += ']';
    return true;
  }
  return false;
}

void new_line(int indent, std::string& out) {
  if (!out.empty()) out += '\n';
  out.append(static_cast<std::size_t>(indent), ' ');
}

bool block_map(const YAML::Node& n, int indent, bool continue_line, std::string& out);
bool block_seq(const YAML::Node& n, int indent, std::string& out);

// The value after "key:" of a block map entry at `indent`.
bool map_value(const YAML::Node& v, int indent, std::string& out) {
  if (v.IsNull() || v.IsScalar()) {
    out += ' ';
    scalar(v, Context::kBlock, out);
    return true;
  }
  if (is_flow(v)) {
    out += ' ';
    return flow(v, out);
  }
  if (v.size() == 0) {  // an empty block collection: on its own line, one level in
    new_line(indent + 2, out);
    out += v.IsMap() ? "{}" : "[]";
    return true;
  }
  if (v.IsMap()) return block_map(v, indent + 2, false, out);
  if (v.IsSequence()) return block_seq(v, indent + 2, out);
  return false;
}

// Entries at `indent`; with `continue_line` the first entry follows a sequence item's "- ".
bool block_map(const YAML::Node& n, int indent, bool continue_line, std::string& out) {
  bool first = true;
  for (const auto& kv : n) {
    if (!(first && continue_line)) new_line(indent, out);
    first = false;
    if (!kv.first.IsScalar()) return false;
    scalar(kv.first, Context::kBlock, out);
    out += ':';
    if (!map_value(kv.second, indent, out)) return false;
  }
  return true;
}

bool block_seq(const YAML::Node& n, int indent, std::string& out) {
  for (const auto& item : n) {
    new_line(indent, out);
    out += "- ";
    if (item.IsNull() || item.IsScalar()) {
      scalar(item, Context::kBlock, out);
    } else if (is_flow(item) || (item.IsMap() && item.size() == 0)) {
      if (!flow(item, out)) return false;
    } else if (item.IsMap()) {
      if (!block_map(item, indent + 2, true, out)) return false;
    } else {
      return false;  // a block sequence or an empty one inside a sequence: yaml-cpp's layout
    }
  }
  return true;
}

std::optional<std::string> write_simple(const YAML::Node& node) {
  std::string out;
  if (!node.IsMap() || is_flow(node) || node.size() == 0) return std::nullopt;
  if (!block_map(node, 0, false, out)) return std::nullopt;
  return out;
}

}  // namespace

std::string write_yaml(const YAML::Node& node) {
  if (auto text = write_simple(node)) return *text;
  YAML::Emitter out;  // any other shape: yaml-cpp itself
  out << node;
  return out.c_str();
}

YamlShape::YamlShape(const std::vector<std::string>& paths) : sections_(1) {
  std::unordered_map<std::string, std::size_t> index;  // section path -> sections_ index
  const auto section_at = [&](const std::string& path, auto&& self) -> std::size_t {
    if (path.empty()) return kDocument;
    if (auto it = index.find(path); it != index.end()) return it->second;
    const auto dot = path.rfind('.');
    Section s;
    s.parent = self(dot == std::string::npos ? std::string() : path.substr(0, dot), self);
    s.key = key(path.substr(dot == std::string::npos ? 0 : dot + 1));
    ++sections_[s.parent].entries;
    sections_.push_back(std::move(s));
    index.emplace(path, sections_.size() - 1);
    return sections_.size() - 1;
  };
  for (const std::string& path : paths) {
    const auto dot = path.rfind('.');
    section_of_.push_back(
        section_at(dot == std::string::npos ? std::string() : path.substr(0, dot), section_at));
    ++sections_[section_of_.back()].entries;
    key_of_.push_back(key(path.substr(dot == std::string::npos ? 0 : dot + 1)));
  }
}

YamlShape::Key YamlShape::key(std::string name) {
  Key k;
  scalar_text(name, Context::kBlock, k.written);
  k.name = std::move(name);
  return k;
}

std::size_t YamlDocument::open(std::size_t s) {
  if (opened_[s] != kNoMap) return opened_[s];
  const std::size_t parent = open(shape_->sections_[s].parent);
  const std::size_t child = maps_.size();
  maps_.emplace_back();
  // Room for every entry the section may get: the section grows without moving its entries.
  maps_.back().entries.reserve(shape_->sections_[s].entries);
  Entry e;
  e.key = &shape_->sections_[s].key;
  e.map = child;
  maps_[parent].entries.push_back(std::move(e));
  opened_[s] = child;
  return child;
}

void YamlDocument::put_scalar(std::size_t shape_path, std::string_view text) {
  const std::size_t map = open(shape_->section_of_[shape_path]);
  Entry e;
  e.key = &shape_->key_of_[shape_path];
  e.scalar_at = scalars_.size();
  e.scalar_size = text.size();
  scalars_ += text;
  maps_[map].entries.push_back(e);
}

void YamlDocument::put_node(std::size_t shape_path, const YAML::Node& value) {
  const std::size_t map = open(shape_->section_of_[shape_path]);
  Entry e;
  e.key = &shape_->key_of_[shape_path];
  e.node = nodes_.size();
  nodes_.push_back(value);
  maps_[map].entries.push_back(std::move(e));
}

YAML::Node YamlDocument::tree(std::size_t map) const {
  YAML::Node out(YAML::NodeType::Map);
  for (const Entry& e : maps_[map].entries) {
    if (e.map != kNoMap)
      out.force_insert(e.key->name, tree(e.map));
    else if (e.node != kNoNode)
      out.force_insert(e.key->name, nodes_[e.node]);
    else
      out.force_insert(e.key->name, YAML::Node(std::string(scalar_of(e))));
  }
  return out;
}

// block_map's layout for a map of this document: the same text, without building the tree.
bool YamlDocument::write_map(std::size_t map, int indent, std::string& out) const {
  for (const Entry& e : maps_[map].entries) {
    new_line(indent, out);
    out += e.key->written;
    out += ':';
    if (e.map != kNoMap) {
      // A section always has an entry below it (put_* creates sections for their keys only).
      if (!write_map(e.map, indent + 2, out)) return false;
    } else if (e.node != kNoNode) {
      if (!map_value(nodes_[e.node], indent, out)) return false;
    } else {
      out += ' ';
      scalar_text(scalar_of(e), Context::kBlock, out);
    }
  }
  return true;
}

std::size_t YamlDocument::text_size(std::size_t map, int indent) const {
  constexpr std::size_t kFlowValueGuess = 64;
  std::size_t n = 0;
  for (const Entry& e : maps_[map].entries) {
    n += 1 + static_cast<std::size_t>(indent) + e.key->written.size() + 1;  // "\n" indent "key:"
    if (e.map != kNoMap)
      n += text_size(e.map, indent + 2);
    else if (e.node != kNoNode)
      n += kFlowValueGuess;
    else
      n += 1 + e.scalar_size;
  }
  return n;
}

std::string YamlDocument::text() const {
  std::string out;
  // Room for a quoted scalar or two and the line break a caller appends.
  constexpr std::size_t kSlack = 32;
  out.reserve(text_size(0, 0) + kSlack);
  // write_yaml writes an empty map, or any shape its own writer does not, through yaml-cpp.
  if (!maps_.front().entries.empty() && write_map(0, 0, out)) return out;
  return write_yaml(tree(0));
}

}  // namespace tiersim::config
