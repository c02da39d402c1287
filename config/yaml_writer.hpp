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

#include <string>

namespace tiersim::config {

// The text YAML::Emitter writes for `node` (without a trailing newline, as Emitter::c_str()).
// Tags, anchors and aliases are not written (tiersim's trees have none).
std::string write_yaml(const YAML::Node& node);

}  // namespace tiersim::config
