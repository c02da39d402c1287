#include "reports/notes_section.hpp"

#include <algorithm>
#include <sstream>

#include "reports/report.hpp"

namespace tiersim::reports {

namespace {

bool any_notes(const std::vector<std::vector<InputNote>>& notes) {
  return std::any_of(notes.begin(), notes.end(), [](const auto& n) { return !n.empty(); });
}

constexpr const char* kWhat =
    "What the numbers below rest on that no value shows: warnings a calibrated device profile "
    "carries from its calibration (its measurements may describe a cache, or the device model "
    "misses points it did not fit), and where a profiled drive's price and power came from (a "
    "profile measures performance only).";

}  // namespace

nlohmann::json notes_json(const std::vector<InputNote>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const InputNote& n : notes)
    out.push_back({{"kind", to_string(n.kind)}, {"subject", n.subject}, {"message", n.message}});
  return out;
}

void print_notes(std::ostream& os, const std::vector<InputNote>& notes, const std::string& indent) {
  for (const InputNote& n : notes)
    os << indent << to_string(n.kind) << ": " << n.subject << ": " << n.message << "\n";
}

std::string notes_html(const std::vector<std::vector<InputNote>>& notes,
                       const std::vector<std::string>& labels) {
  if (!any_notes(notes)) return "";
  std::ostringstream h;
  h << "<h2 id=\"input-notes\">Input notes</h2>\n<p class=\"note\">" << html_escape(kWhat)
    << "</p>\n";
  for (std::size_t i = 0; i < notes.size() && i < labels.size(); ++i) {
    if (notes[i].empty()) continue;
    h << "<h3>" << html_escape(labels[i]) << "</h3>\n<ul>";
    for (const InputNote& n : notes[i])
      h << "<li class=\"input-" << to_string(n.kind) << "\"><b>" << to_string(n.kind) << "</b> <code>"
        << html_escape(n.subject) << "</code>: " << html_escape(n.message) << "</li>";
    h << "</ul>\n";
  }
  return h.str();
}

std::string notes_banner_html(const std::vector<std::vector<InputNote>>& notes) {
  const auto warned = std::count_if(notes.begin(), notes.end(), [](const auto& n) {
    return std::any_of(n.begin(), n.end(),
                       [](const InputNote& x) { return x.kind == InputNote::Kind::kWarning; });
  });
  if (warned == 0) return "";
  return "<p class=\"validation missing\">" + std::to_string(warned) + " configuration" +
         (warned == 1 ? " rests" : "s rest") +
         " on inputs with warnings (a calibrated profile that may describe a cache, or a "
         "drive without power or price): see <a href=\"#input-notes\">Input notes</a>.</p>\n";
}

std::string notes_markdown(const std::vector<std::vector<InputNote>>& notes,
                           const std::vector<std::string>& labels) {
  if (!any_notes(notes)) return "";
  std::ostringstream m;
  m << "## Input notes\n\n" << md_escape(kWhat) << "\n";
  for (std::size_t i = 0; i < notes.size() && i < labels.size(); ++i) {
    if (notes[i].empty()) continue;
    m << "\n### " << md_escape(labels[i]) << "\n\n";
    for (const InputNote& n : notes[i])
      m << "- **" << to_string(n.kind) << "** " << md_escape(n.subject) << ": "
        << md_escape(n.message) << "\n";
  }
  return m.str() + "\n";
}

}  // namespace tiersim::reports
