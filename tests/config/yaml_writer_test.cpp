// The resolved-YAML writer must write exactly what yaml-cpp's emitter writes: the text is hashed,
// and results databases find earlier runs by that hash.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>
#include <algorithm>

#include <random>

#include "config/scenario_loader.hpp"
#include "config/yaml_writer.hpp"
#include "tests/support.hpp"

namespace config_yaml_writer_test {

using namespace tiersim;
using namespace tiersim::config;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";

std::string yaml_cpp(const YAML::Node& n) {
  YAML::Emitter out;
  out << n;
  return out.c_str();
}

// Scalars that need quoting somewhere, and plain ones.
const std::vector<std::string> kScalars = {
    "H200", "llama3-70b", "0.5", "1e-05", "-1", "-", "- a", "a: b", "a:b", "a #b", "a#b", "#x",
    "", " lead", "trail ", "two  spaces", "null", "Null", "NULL", "~", "true", "no", "x, y", "[x]",
    "{x}", "a]b", "?", "? x", ":x", "'q'", "it's", "\"q\"", "tab\there", "new\nline", "caf\xc3\xa9",
    "%x", "@x", "`x`", "&a", "*a", "!t", "|x", ">x", "a=b", "(x)", "/path/to.yaml", "../up.yaml",
    "_x", ".5", "+5", "a/b c", "5%", "1,000", "x}", "x]", "{", "}", ",x", "x,",
    "a, b: c", "a,b:", "a, #b", "a,#b", "a ,", "x,y,z", "one, two, three", "a,-b", "a, - b"};

// A random tree of the shapes the resolved YAML has: block maps, block sequences of scalars,
// flow maps and block maps, and flow maps and sequences.
YAML::Node random_scalar(std::mt19937& rng) {
  if (rng() % 15 == 0) return YAML::Node(YAML::NodeType::Null);
  return YAML::Node(kScalars[rng() % kScalars.size()]);
}

YAML::Node random_flow(std::mt19937& rng, int depth) {
  const bool map = rng() % 2 == 0;
  YAML::Node n(map ? YAML::NodeType::Map : YAML::NodeType::Sequence);
  n.SetStyle(YAML::EmitterStyle::Flow);
  const int size = static_cast<int>(rng() % 4);
  for (int i = 0; i < size; ++i) {
    YAML::Node v = depth > 0 && rng() % 4 == 0 ? random_flow(rng, depth - 1) : random_scalar(rng);
    if (map)
      n[kScalars[rng() % kScalars.size()] + std::to_string(i)] = v;
    else
      n.push_back(v);
  }
  return n;
}

YAML::Node random_block_map(std::mt19937& rng, int depth);

YAML::Node random_value(std::mt19937& rng, int depth) {
  switch (rng() % 6) {
    case 0: return random_flow(rng, 2);
    case 1:
      if (depth > 0) return random_block_map(rng, depth - 1);
      [[fallthrough]];
    case 2:
      if (depth > 0) {
        YAML::Node seq(YAML::NodeType::Sequence);
        const int size = static_cast<int>(rng() % 4);
        for (int i = 0; i < size; ++i) {
          const auto pick = rng() % 3;
          seq.push_back(pick == 0   ? random_scalar(rng)
                        : pick == 1 ? random_flow(rng, 1)
                                    : random_block_map(rng, depth - 1));
        }
        return seq;
      }
      [[fallthrough]];
    default: return random_scalar(rng);
  }
}

YAML::Node random_block_map(std::mt19937& rng, int depth) {
  YAML::Node n(YAML::NodeType::Map);
  const int size = static_cast<int>(rng() % 5);
  for (int i = 0; i < size; ++i)
    n[kScalars[rng() % kScalars.size()] + std::to_string(i)] = random_value(rng, depth);
  return n;
}

// {key: s, flow: {k: s}}: the scalar in block and in flow context.
YAML::Node in_both_contexts(const std::string& s) {
  YAML::Node m(YAML::NodeType::Map);
  m["key"] = s;
  YAML::Node flow(YAML::NodeType::Map);
  flow.SetStyle(YAML::EmitterStyle::Flow);
  flow["k"] = s;
  m["flow"] = flow;
  return m;
}

}  // namespace

TEST_CASE("the YAML writer writes what yaml-cpp's emitter writes", "[config][yaml]") {
  std::mt19937 rng(42);
  for (int i = 0; i < 3000; ++i) {
    const YAML::Node tree = random_block_map(rng, 3);
    const std::string expected = yaml_cpp(tree);
    INFO(expected);
    REQUIRE(write_yaml(tree) == expected);
  }
  for (const auto& s : kScalars) {
    YAML::Node m = in_both_contexts(s);
    INFO(s);
    CHECK(write_yaml(m) == yaml_cpp(m));
  }
}

TEST_CASE("a document built key by key is written as its yaml-cpp tree", "[config][yaml]") {
  // YamlDocument writes the resolved YAML of every load without a yaml-cpp tree; its text must be
  // the emitter's for the tree with the same entries. Sections at random dotted paths, scalars
  // that need quoting, flow maps and sequences, and (rarely) a block map as a value, which the
  // writer hands to yaml-cpp.
  // The same document on a YamlShape that lists its paths in another order, with paths it never
  // puts, must be written the same.
  std::mt19937 rng(7);
  const std::vector<std::string> sections = {"hardware", "gpu", "policy", "a b", "x:y",
                                             "null",     "-",   "#c",     "k"};
  for (int i = 0; i < 2000; ++i) {
    const int keys = static_cast<int>(rng() % 12);
    std::vector<std::string> paths;
    std::vector<YAML::Node> values;  // where is_node
    std::vector<bool> is_node;
    std::vector<std::string> scalars;
    for (int k = 0; k < keys; ++k) {
      std::string path;
      for (auto depth = rng() % 4; depth > 0; --depth)
        path += sections[rng() % sections.size()] + ".";
      path += kScalars[rng() % kScalars.size()] + std::to_string(k);
      const auto pick = rng() % 8;
      paths.push_back(path);
      values.push_back(pick == 0   ? random_flow(rng, 2)
                       : pick == 1 ? random_value(rng, 1)
                                   : YAML::Node());
      is_node.push_back(pick <= 1);
      scalars.push_back(kScalars[rng() % kScalars.size()]);
    }
    const YamlShape in_order(paths);
    YamlDocument doc(in_order);
    for (std::size_t k = 0; k < paths.size(); ++k) {
      if (is_node[k])
        doc.put_node(k, values[k]);
      else
        doc.put_scalar(k, scalars[k]);
    }
    const std::string expected = yaml_cpp(doc.tree());
    INFO(expected);
    REQUIRE(doc.text() == expected);

    std::vector<std::string> listed = paths;
    listed.push_back("unused.path");
    std::reverse(listed.begin(), listed.end());
    const YamlShape shape(listed);
    YamlDocument by_index(shape);
    for (std::size_t k = 0; k < paths.size(); ++k) {
      const auto index = static_cast<std::size_t>(
          std::find(listed.begin(), listed.end(), paths[k]) - listed.begin());
      if (is_node[k])
        by_index.put_node(index, values[k]);
      else
        by_index.put_scalar(index, scalars[k]);
    }
    REQUIRE(by_index.text() == expected);
  }
}

TEST_CASE("every shipped scenario's resolved YAML is what yaml-cpp writes", "[config][yaml]") {
  const Catalog catalog = Catalog::load(kData);
  LoadOptions opts;
  opts.catalog = &catalog;
  int checked = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    INFO(file);
    const Scenario s = load_scenario(file, opts);
    // The parser keeps each collection's style, so the tree read back is the tree written.
    const YAML::Node tree = YAML::Load(s.resolved_yaml);
    CHECK(yaml_cpp(tree) + "\n" == s.resolved_yaml);
    ++checked;
  }
  CHECK(checked > 50);
}

// Found by the fuzz target (tests/fuzz/seeds/regression-cr-name.yaml): yaml-cpp's emitter writes a
// trailing carriage return plain and its parser drops it, so a scenario named "\r" resolved to
// YAML that no longer loaded.
TEST_CASE("scalars with a carriage return read back as written", "[config][yaml]") {
  for (const std::string s : {"\r", "a\r", "a\rb", "\r\n", "x\r\ny\r"}) {
    YAML::Node m = in_both_contexts(s);
    m["after"] = "1";
    const std::string text = write_yaml(m);
    INFO(text);
    const YAML::Node back = YAML::Load(text);
    CHECK(back["key"].Scalar() == s);
    CHECK(back["flow"]["k"].Scalar() == s);
  }
}
}  // namespace config_yaml_writer_test
