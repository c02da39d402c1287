// Fuzz target for the readers of user-written YAML: the scenario loader, the device-profile
// reader, and the comparison, sweep and plan file readers. Every input goes to every reader; a reader may
// reject it only with a typed tiersim::Error (model/errors.hpp). Anything else is a finding: an
// exception of another type (what `tiersim` reports as "internal error"), a crash, or a sanitizer
// report. The same source builds two ways (tests/fuzz/README.md): with clang's libFuzzer, and
// with GCC against tests/fuzz/standalone_driver.cpp, the time-boxed run CI does.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "config/catalog.hpp"
#include "config/compare_file.hpp"
#include "config/device_profile.hpp"
#include "config/yaml_reader.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "study/planner.hpp"
#include "study/sweep.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using tiersim::config::Catalog;

// The catalogs are read once per process, not per input: they are the same for every input, and
// reading them would dominate each execution. Read-only after construction.
const Catalog& catalog() {
  static const Catalog c = Catalog::load();
  return c;
}

// Comparison, sweep and plan files name their scenarios relative to themselves; the input pretends
// to sit next to the shipped ones so that their `file:` and `base:` values resolve.
const std::string& sweep_name() {
  static const std::string s = catalog().dir() + "/../sweeps/fuzz-input.yaml";
  return s;
}
const std::string& plan_name() {
  static const std::string s = catalog().dir() + "/../plans/fuzz-input.yaml";
  return s;
}

const std::string& compare_name() {
  static const std::string s = catalog().dir() + "/../cost/fuzz-input.yaml";
  return s;
}

// The parsed input as the reader of a file named `name` would see it (errors and relative
// paths name that file).
tiersim::config::YNode named(const tiersim::config::YNode& root, const std::string& name) {
  return tiersim::config::YNode(root.raw(), std::make_shared<const std::string>(name), "");
}

}  // namespace

namespace tiersim::fuzz {

int run_input(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tiersim::config::LoadOptions opts;
  opts.catalog = &catalog();
  int accepted = 0;

  // Every reader starts with config::parse_yaml_text on this same text (the profile reader after
  // reading it back from its file). The text is parsed once here: input that is not YAML gets the
  // same verdict from every reader at that step, so it stops here, and the readers that can take
  // a parsed tree get this one (they only read it; config::ScenarioSource relies on the same).
  // That makes an execution about twice as fast, which matters for campaigns of millions.
  tiersim::config::YNode root;
  if (!accepts("YAML parser", [&] { root = tiersim::config::parse_yaml_text(text, "fuzz-input.yaml"); }))
    return 0;

  accepted += accepts("scenario loader", [&] {
    const Scenario s = tiersim::config::load_scenario_tree(root, "fuzz-input.yaml", opts);
    // The resolved YAML inlines every value; it must load back into the same scenario
    // (config/scenario_loader.cpp keeps catalog provenance for that reason).
    Scenario again;
    try {
      again = tiersim::config::load_scenario_text(s.resolved_yaml, "resolved.yaml", opts);
    } catch (const tiersim::Error& e) {
      finding("scenario loader", std::string("the resolved YAML does not load back: ") + e.what());
    }
    if (again.hash != s.hash)
      finding("scenario loader", "the resolved YAML loads back into a different scenario");
  });

  accepted += accepts("device profile", [&] { tiersim::read_device_profile(root, "fuzz-profile.yaml"); });

  accepted += accepts("sweep file", [&] {
    const auto spec = tiersim::sweep::parse_sweep(named(root, sweep_name()), text);
    tiersim::sweep::load_point(spec.space, tiersim::sweep::point_at(spec.space, 0), catalog());
  });

  accepted += accepts("comparison file", [&] {
    const auto cmp = tiersim::config::read_comparison(named(root, compare_name()));
    tiersim::config::load_variant(cmp.variants.front(), opts);
  });

  accepted += accepts("plan file", [&] {
    const auto spec = tiersim::plan::parse_plan(named(root, plan_name()), text);
    const Scenario s =
        tiersim::sweep::load_point(spec.space, tiersim::sweep::point_at(spec.space, 0), catalog());
    tiersim::plan::optimistic_bounds(s);
  });
  return accepted;
}

}  // namespace tiersim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tiersim::fuzz::run_input(data, size);
  return 0;
}
