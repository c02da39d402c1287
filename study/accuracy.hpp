#pragma once
// What `tiersim validate` found, kept where `tiersim run` can read it without simulating the
// 233 reference scenarios again: per validation group its row counts and errors, and the GPUs and
// execution stacks some published prediction row runs on. `tiersim validate --write-accuracy
// FILE` writes it; the shipped copy is scenarios/validation/accuracy.json, and a test fails when
// it no longer matches what validate gives (tests/study/validation_test.cpp).
//
// `run` quotes from it the error band of the scenario's group (the out-of-sample error, as reports
// do) and names the parts of the configuration no published row anchors, so that a prediction
// for hardware nobody has measured says so where it is printed.
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::validation {

struct ValidationSummary;

// One group's errors, as validate's per-group table prints them (prediction rows only).
struct GroupAccuracy {
  std::string name;
  std::size_t rows = 0;                // in-sample prediction rows
  double in_sample_pct = 0;            // mean absolute percentage error over them
  std::size_t out_of_sample_rows = 0;  // leave-one-source-out rows
  double out_of_sample_pct = 0;        // mean absolute percentage error over them
  bool provisional = false;            // validate's verdict for the group
};

// The mechanisms of a scenario's model that a published row may or may not have exercised:
// multi-head latent attention, sliding-window attention, a mixture of experts, its routed expert
// fetch from host memory or drives, dense layers between its expert layers. The one list both
// validate (which of them its rows have) and run (which of them its scenario has) use.
std::vector<std::string> model_features(const Scenario& s);

struct AccuracyRecord {
  std::vector<GroupAccuracy> groups;  // validate's order
  // The GPUs (catalog names) and execution stacks that some prediction row which fits runs on.
  std::vector<std::string> gpus;
  std::vector<std::string> stacks;
  // The model_features that some prediction row which fits has.
  std::vector<std::string> features;

  const GroupAccuracy* group(const std::string& name) const;  // nullptr: no row in that group
  // The parts of `s` no published prediction row anchors: "GPU X" (compared without case),
  // "stack Y", and each of its model_features no row has; empty when every part is anchored. The
  // one rule reports and `run` use.
  std::vector<std::string> unanchored_parts(const Scenario& s) const;
};

// The record of a validation run.
AccuracyRecord accuracy_record(const ValidationSummary& v);

// The record as the JSON text validate --write-accuracy writes (its "about" says how it is made;
// percentages to the one decimal validate prints); load_accuracy reads it back.
std::string accuracy_json_text(const AccuracyRecord& record);

// Reads a file accuracy_json_text wrote. Strict: unknown keys, wrong types and missing keys are
// ConfigErrors naming file, line and key (the file is read as YAML, of which JSON is a part,
// where it is not as expected).
AccuracyRecord load_accuracy(const std::string& path);

// <data_dir>/validation/accuracy.json ("" = the default data folder).
std::string accuracy_path(const std::string& data_dir);
// That file read (load_accuracy); nullopt when the data folder has none.
std::optional<AccuracyRecord> shipped_accuracy(const std::string& data_dir);

// What a run of `s` can say of its accuracy: its validation group, that group's errors (none when
// no published row is in it) and the parts no row anchors.
struct RunAccuracy {
  std::string group;
  std::optional<GroupAccuracy> errors;
  std::vector<std::string> unvalidated;
  // The groups that measure its energy and power metrics, whatever its kind (each metric's
  // declaration names one, sim/metrics.hpp validation_group): the node's at its AC input and the
  // GPUs' own. No errors where the record has no row of the group.
  std::string node_energy_group, gpu_energy_group;
  std::optional<GroupAccuracy> node_energy, gpu_energy;
};
RunAccuracy run_accuracy(const Scenario& s, const AccuracyRecord& record);

}  // namespace tiersim::validation
