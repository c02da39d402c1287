#pragma once
// A scenario's input notes (InputNote, model/scenario.hpp: what a calibrated profile's calibration
// warned about, where a profiled drive's price and power came from) in every output: run's text
// and --json, compare's footnotes and --json, and the report's "Input notes" section.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::reports {

// The `notes` array of run --json and compare --json: {kind: "warning" | "source", subject,
// message} per note, in the loader's order.
nlohmann::json notes_json(const std::vector<InputNote>& notes);

// One line per note: "<indent><kind>: <subject>: <message>".
void print_notes(std::ostream& os, const std::vector<InputNote>& notes,
                 const std::string& indent = "  ");

// The report's section (HTML): per configuration with notes, its warnings and sources; "" when no
// configuration has any. `notes[i]` belongs to the configuration labelled `labels[i]`.
std::string notes_html(const std::vector<std::vector<InputNote>>& notes,
                       const std::vector<std::string>& labels);
// One line for the top of the page when some configuration's inputs carry a warning, naming how
// many and linking to the section; "" otherwise.
std::string notes_banner_html(const std::vector<std::vector<InputNote>>& notes);
// The same in Markdown ("## Input notes"); "" when no configuration has any.
std::string notes_markdown(const std::vector<std::vector<InputNote>>& notes,
                           const std::vector<std::string>& labels);

}  // namespace tiersim::reports
