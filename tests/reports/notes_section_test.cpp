// The input notes in the report (reports/notes_section.hpp): a section per configuration with
// notes, a line at the top when some carry a warning, nothing when none has any.
#include "reports/notes_section.hpp"

#include <catch2/catch.hpp>
#include <sstream>

namespace reports_notes_section_test {

using namespace tiersim;
using namespace tiersim::reports;

namespace {

const std::vector<std::string> kLabels = {"baseline", "profiled <drive>"};

std::vector<std::vector<InputNote>> one_warned() {
  return {{},
          {{InputNote::Kind::kWarning, "hardware.nvme.profile", "may describe a <cache>"},
           {InputNote::Kind::kSource, "hardware.nvme", "price from catalog drive 'generic-gen5'"}}};
}

}  // namespace

TEST_CASE("report notes: nothing without notes", "[reports][notes]") {
  const std::vector<std::vector<InputNote>> none = {{}, {}};
  CHECK(notes_html(none, kLabels).empty());
  CHECK(notes_markdown(none, kLabels).empty());
  CHECK(notes_banner_html(none).empty());
  CHECK(notes_html({}, kLabels).empty());  // runs stored without notes loaded again
}

TEST_CASE("report notes: each configuration's notes, escaped, with a line at the top for warnings",
          "[reports][notes]") {
  const auto notes = one_warned();
  const std::string html = notes_html(notes, kLabels);
  INFO(html);
  CHECK(html.find("<h2 id=\"input-notes\">Input notes</h2>") != std::string::npos);
  CHECK(html.find("<h3>profiled &lt;drive&gt;</h3>") != std::string::npos);
  CHECK(html.find("<h3>baseline</h3>") == std::string::npos);  // no notes: no heading
  CHECK(html.find("<li class=\"input-warning\"><b>warning</b> <code>hardware.nvme.profile</code>: "
                  "may describe a &lt;cache&gt;</li>") != std::string::npos);
  CHECK(html.find("<li class=\"input-source\"><b>source</b>") != std::string::npos);
  CHECK(notes_banner_html(notes).find("1 configuration rests on inputs with warnings") !=
        std::string::npos);
  // Sources alone are no warning.
  CHECK(notes_banner_html({{notes[1][1]}}).empty());

  const std::string md = notes_markdown(notes, kLabels);
  INFO(md);
  CHECK(md.rfind("## Input notes\n", 0) == 0);
  CHECK(md.find("### profiled &lt;drive&gt;") != std::string::npos);
  CHECK(md.find("- **warning** hardware.nvme.profile: may describe a &lt;cache&gt;") !=
        std::string::npos);
}

TEST_CASE("notes as JSON and as lines", "[reports][notes]") {
  const auto notes = one_warned()[1];
  const nlohmann::json j = notes_json(notes);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["kind"] == "warning");
  CHECK(j[0]["subject"] == "hardware.nvme.profile");
  CHECK(j[1]["message"] == "price from catalog drive 'generic-gen5'");
  CHECK(notes_json({}).is_array());
  std::ostringstream os;
  print_notes(os, notes, "cfg: ");
  CHECK(os.str() ==
        "cfg: warning: hardware.nvme.profile: may describe a <cache>\n"
        "cfg: source: hardware.nvme: price from catalog drive 'generic-gen5'\n");
}
}  // namespace reports_notes_section_test
