// Names that try to break out of their context (tests/reports/payload_names.txt) go through
// `tiersim compare --json --db` and `tiersim report`; every output keeps them as inert text.
// tests/reports/check_report.sh renders the same report in Chromium.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "reports/report.hpp"
#include "tests/temp_dir.hpp"
#include "tests/support.hpp"

namespace reports_report_payloads_test {

using namespace tiersim;

namespace {

using test::slurp;

struct Payload {
  std::string yaml;  // the line of payload_names.txt
  std::string name;  // what it decodes to
};

std::vector<Payload> payloads() {
  std::ifstream in(std::string(TIERSIM_SOURCE_DIR) + "/tests/reports/payload_names.txt",
                   std::ios::binary);
  std::vector<Payload> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out.push_back({line, YAML::Load(line).as<std::string>()});
  return out;
}

// RFC 4180 records.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

// Cell separators of one Markdown table row: "|" not escaped by a backslash.
int md_cells(const std::string& row) {
  int n = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\')
      ++i;
    else if (row[i] == '|')
      ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("report: payload names stay inert in compare --json, HTML, Markdown and CSV",
          "[report][payloads]") {
  const std::string bin = test::tiersim_bin();
  if (bin.empty()) {
    WARN("TIERSIM_BIN not set: skipping the payload runs");
    return;
  }
  const auto list = payloads();
  REQUIRE(list.size() >= 10);
  test::TempDir dir;
  const std::string base = slurp(std::string(TIERSIM_SOURCE_DIR) +
                                 "/scenarios/reference/opt30b-a6000-quant-kvoffload.yaml");
  const std::regex name_line("(^|\n)name: [^\n]*");
  std::string files;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string name = "p";  // built in steps: GCC 12 warns (-Wstringop-overflow) on "p" + ...
    name += std::to_string(i);
    const std::string f = dir.file(name + ".yaml");
    std::ofstream(f, std::ios::binary) << std::regex_replace(
        base, name_line, "$1name: " + list[i].yaml, std::regex_constants::format_first_only);
    files += " " + f;
  }
  const std::string db = dir.file("results.sqlite");
  REQUIRE(test::shell(bin + " compare --json --db " + db + files + " >" + dir.file("cmp.json") +
                      " 2>" + dir.file("cmp.err")) == 0);
  const auto cmp = nlohmann::json::parse(slurp(dir.file("cmp.json")));  // throws if not JSON
  REQUIRE(cmp["variants"].size() == list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    CHECK(cmp["variants"][i]["name"].get<std::string>() == reports::valid_utf8(list[i].name));

  REQUIRE(test::shell(bin + " report --no-validation --db " + db + " --out " + dir.file("r") +
                      " >" + dir.file("report.out") + " 2>&1") == 0);
  const std::string html = slurp(dir.file("r/index.html"));
  const std::string md = slurp(dir.file("r/report.md"));
  const std::string csv = slurp(dir.file("r/metrics.csv"));
  for (const std::string* text : {&html, &md, &csv}) CHECK(reports::valid_utf8(*text) == *text);

  // HTML: the page's own script (after the vendored ones) holds the plots' JSON; no "<" or
  // U+2028 may appear in it, and no payload appears unescaped anywhere.
  const std::size_t own = html.rfind("<script>");
  REQUIRE(own != std::string::npos);
  const std::string script = html.substr(own + 8, html.find("</script>", own) - own - 8);
  CHECK(script.find('<') == std::string::npos);
  CHECK(script.find("\xe2\x80\xa8") == std::string::npos);
  CHECK(html.substr(own + 8).find("</script>\n</body></html>") != std::string::npos);
  for (const auto& p : list)
    if (p.name.find_first_of("<>\"") != std::string::npos) {
      INFO(p.name);
      CHECK(html.find(p.name) == std::string::npos);
    }
  CHECK(html.find("&lt;!--&lt;script&gt;") != std::string::npos);

  // CSV: every record has the header's 8 fields; no text cell starts a formula.
  const auto rows = parse_csv(csv);
  REQUIRE(rows.size() > list.size());
  for (const auto& r : rows) {
    REQUIRE(r.size() == 8);
    for (std::size_t c : {1u, 2u, 3u, 4u, 5u, 7u})
      if (!r[c].empty()) CHECK(std::string("=+-@\t\r").find(r[c].front()) == std::string::npos);
  }
  bool saw_formula_payload = false;
  for (const auto& r : rows) saw_formula_payload |= r[1] == "'=HYPERLINK(\"x\")";
  CHECK(saw_formula_payload);

  // Markdown: no raw HTML from a name, and every table row has the header's cell count.
  CHECK(md.find("<script") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  std::istringstream lines(md);
  std::string line;
  int header_cells = -1, table_rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| metric |", 0) == 0) header_cells = md_cells(line);
    if (header_cells > 0 && line.rfind("|", 0) == 0) {
      INFO(line);
      CHECK(md_cells(line) == header_cells);
      ++table_rows;
    }
    if (header_cells > 0 && line.empty()) break;
  }
  CHECK(header_cells == static_cast<int>(list.size()) + 3);
  CHECK(table_rows > 5);
}

TEST_CASE("report: escaping per context", "[report][payloads]") {
  CHECK(reports::csv_escape("=1+2") == "'=1+2");
  CHECK(reports::csv_escape("@SUM(1)") == "'@SUM(1)");
  CHECK(reports::csv_escape("-1") == "'-1");
  CHECK(reports::csv_escape("\t=1") == "'\t=1");
  CHECK(reports::csv_escape("=a,b") == "\"'=a,b\"");
  CHECK(reports::html_escape("'x'") == "&#39;x&#39;");
  CHECK(reports::valid_utf8("a\xff"
                            "b") ==
        "a\xef\xbf\xbd"
        "b");
  CHECK(reports::valid_utf8("\xe2\x80\xa8") == "\xe2\x80\xa8");  // U+2028 is valid
  CHECK(reports::valid_utf8("\xed\xa0\x80") != "\xed\xa0\x80");  // a UTF-16 surrogate is not
  CHECK(reports::valid_utf8("\xc3") == "\xef\xbf\xbd");          // truncated sequence
  CHECK(reports::valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
}
}  // namespace reports_report_payloads_test
