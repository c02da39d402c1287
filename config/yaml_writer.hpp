#pragma once
// Writes a YAML::Node tree as text, byte for byte as yaml-cpp's YAML::Emitter (0.7) writes it,
// for the shapes tiersim writes: block maps and sequences, flow maps and sequences, and scalars.
//
// Why: every scenario load writes its resolved YAML (the text its hash is taken of), and a plan
// or sweep loads thousands of points. yaml-cpp's emitter decides for each scalar whether it may be
// written plain by running its regular-expression engine over every character; that was about 30%
// of `tiersim plan`'s CPU time (perf, issue 13). Here a scalar made only of characters that can
// never need quoting is written directly; any other scalar is handed to yaml-cpp's own emitter in
// the same context (block or flow), so the quoting rules stay yaml-cpp's. tests/config/
// yaml_writer_test.cpp checks the result against YAML::Emitter for every shipped scenario and for
// generated trees and scalars.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tiersim::config {

// The text YAML::Emitter writes for `node` (without a trailing newline, as Emitter::c_str()).
// Tags, anchors and aliases are not written (tiersim's trees have none).
std::string write_yaml(const YAML::Node& node);

// The dotted paths a family of documents takes its keys from (the scenario option table), split
// into sections and last keys once: a YamlDocument made on it puts a key by the path's index in
// that list, without splitting or looking up the path. Immutable once made.
class YamlShape {
 public:
  explicit YamlShape(const std::vector<std::string>& paths);

 private:
  friend class YamlDocument;
  static constexpr std::size_t kDocument = 0;  // sections_[0]: the document itself
  // A key and its text in a block map (quoted where it must be), written once.
  struct Key {
    std::string name;
    std::string written;
  };
  static Key key(std::string name);
  struct Section {
    std::size_t parent = kDocument;
    Key key;                  // its last key ("" for the document)
    std::size_t entries = 0;  // the most entries a document can put in it (keys and sections)
  };
  std::vector<Section> sections_;
  std::vector<std::size_t> section_of_;  // by path: the section holding its last key
  std::vector<Key> key_of_;              // by path: its last key
};

// A block map built key by key at dotted paths, written as write_yaml writes the yaml-cpp tree
// with the same entries (tree()), without building that tree: every scenario load writes its
// resolved YAML this way, and the tree's nodes were a quarter of a sweep point's load. Sections
// appear in the order of the first key written below them; each path is written once. A path is
// given by its index in the document's YamlShape, which must outlive the document.
class YamlDocument {
 public:
  explicit YamlDocument(const YamlShape& shape)
      : maps_(1), shape_(&shape), opened_(shape.sections_.size(), kNoMap) {
    opened_[YamlShape::kDocument] = 0;
    maps_.reserve(shape.sections_.size());
    maps_.front().entries.reserve(shape.sections_[YamlShape::kDocument].entries);
    scalars_.reserve(kScalarBytesGuess * shape.key_of_.size());
  }
  void put_scalar(std::size_t shape_path, std::string_view text);   // a scalar (its text)
  void put_node(std::size_t shape_path, const YAML::Node& value);   // a flow map or a sequence
  std::string text() const;                                         // write_yaml(tree())
  YAML::Node tree() const { return tree(0); }

 private:
  static constexpr std::size_t kNoMap = static_cast<std::size_t>(-1);
  static constexpr std::size_t kNoNode = static_cast<std::size_t>(-1);
  // Bytes of scalar text reserved per path of the shape: a resolved scenario's scalars average
  // about ten, and not every path is written.
  static constexpr std::size_t kScalarBytesGuess = 12;
  // Indices only, so that a growing section moves its entries rather than copying them (a
  // YAML::Node member made the move throwing, and std::vector then copies): a scenario's resolved
  // YAML puts about a hundred and fifty scalars, and a plan writes thousands of them. A scalar's
  // text is a range of scalars_, not a string of its own to allocate and free.
  struct Entry {
    const YamlShape::Key* key = nullptr;  // in the shape
    std::size_t map = kNoMap;             // a section: maps_[map]
    std::size_t node = kNoNode;           // a flow map or sequence: nodes_[node]
    std::size_t scalar_at = 0;            // a scalar: scalars_[scalar_at, + scalar_size)
    std::size_t scalar_size = 0;
  };
  static_assert(std::is_nothrow_move_constructible_v<Entry>);
  std::string_view scalar_of(const Entry& e) const {
    return std::string_view(scalars_).substr(e.scalar_at, e.scalar_size);
  }
  struct Map {
    std::vector<Entry> entries;
  };
  // The map of the shape's section `section`, made (with its parents) at its first key.
  std::size_t open(std::size_t section);
  YAML::Node tree(std::size_t map) const;
  bool write_map(std::size_t map, int indent, std::string& out) const;
  // About the length write_map gives the map [bytes]: its scalars as written plain, a flow
  // value's guessed. The text is reserved at that, so it is not copied as it grows.
  std::size_t text_size(std::size_t map, int indent) const;
  std::vector<Map> maps_;          // [0] the document
  std::vector<YAML::Node> nodes_;  // put_node's values
  std::string scalars_;            // put_scalar's texts, one after another
  const YamlShape* shape_;
  std::vector<std::size_t> opened_;  // by shape section: its maps_ index, kNoMap until opened
};

}  // namespace tiersim::config
