#pragma once
// The decision summary at the top of the report: the recommendation per objective (winner, its
// margin over the runner-up and ratio to the baseline, set against the validation error band of
// its group), a plain description of each configuration, the headline chart with error bands and
// a tornado chart per leading configuration. `tiersim report` fills DecisionInput (it can load
// scenarios and run the sensitivity analysis); this file only formats.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "reports/charts.hpp"
#include "sim/metrics.hpp"

namespace tiersim::reports {

struct ReportInput;

// One input's swing in one configuration (copied from study/sensitivity.hpp so the report
// library does not depend on the study library).
struct TornadoBar {
  std::string input;  // "GPU price"
  std::string key;    // economics.prices.gpu_usd
  double low_value = 0, high_value = 0;
  double metric_low = 0, metric_high = 0;
};

struct TornadoChart {
  std::size_t run = 0;  // index into ReportInput::runs
  double base_metric = 0;
  std::vector<TornadoBar> bars;  // by decreasing swing
};

struct DecisionInput {
  // The objective of the recommendation.
  std::string metric = std::string(sim::metric::kUsdPerMillionTokens.name);
  bool lower_is_better = true;
  // Per run (same order as ReportInput::runs): its plain description and its validation group.
  std::vector<std::string> descriptions;
  std::vector<std::string> groups;
  // Per run: the parts of its configuration no published row anchors ("GPU X", "stack Y",
  // study/validation.hpp unanchored_parts); quoted as unvalidated beside its error band.
  std::vector<std::vector<std::string>> unvalidated;
  double range = 0.2;                   // the sensitivity range the tornadoes used
  std::vector<TornadoChart> tornadoes;  // the winner's and the runner-up's, when computed
  std::string sensitivity_note;         // why there is no tornado ("" when there is one)
};

// A prediction's error band: the validation group whose published rows measure it and that
// group's mean absolute error; no band (pct empty) when no published case covers it. Reports put
// one beside each configuration's metric, `tiersim run` beside its whole table.
struct ErrorBand {
  std::string group;
  // [%] The group's leave-one-source-out mean absolute error, never below its in-sample mean
  // (study/validation.hpp): the in-sample mean promises more accuracy than the model has on
  // systems it has not seen.
  std::optional<double> pct;
  bool provisional = false;
  bool validation_run = true;            // false: made without the validation
  std::size_t measurements = 0;          // in-sample prediction rows of the group
  double in_sample_pct = 0;              // [%]
  std::vector<std::string> unvalidated;  // parts no published row anchors ("GPU X", "stack Y")

  // A band from a handful of published rows (one single-GPU run for a whole group) says little
  // of a margin between two predictions: it backs one only from this many rows up.
  static constexpr std::size_t kMinRowsToBackMargin = 5;
  bool backs_margin() const { return pct && measurements >= kMinRowsToBackMargin; }
};

// Fills `b`'s errors from its group's (validate's per-group figures, percent); nothing when the
// group has no row. The one place the band's rule is applied.
void set_group_errors(ErrorBand& b, std::size_t rows, double in_sample_pct,
                      std::size_t out_of_sample_rows, double out_of_sample_pct, bool provisional);

// The band in words: "+-9.5 % (out-of-sample validation error of group ZeRO-Inference, ...)",
// "...; from 1 published row only)" where the group has fewer than kMinRowsToBackMargin, or why
// there is none, then the unvalidated parts.
std::string band_text(const ErrorBand& b);
// The band in a few characters: "+-12.3 %", "in-sample 5.9 %" (published cases, every one of
// which fed a constant it uses: no out-of-sample band), "unvalidated" (no published case) or
// "no error band" (made without the validation), for the runner-up, lists and table cells.
std::string short_band(const ErrorBand& b);
// short_band and what qualifies it, for a table cell or a list: " prov." for a provisional group,
// ", 1 row" where the group has fewer than kMinRowsToBackMargin, "; GPU B200 unvalidated" for
// each part no published row runs on.
std::string compact_band(const ErrorBand& b);

// A winner's value `w` against the runner-up's `r` (lower better or not): "12.5 % lower than",
// "14.0 % higher than", "2.5x".
std::string margin_text(double w, double r, bool lower);
// Whether the two predictions' bands, [x (1 - e), x (1 + e)], overlap: the order is then within
// the model's error.
bool bands_overlap(double w, const ErrorBand& bw, double r, const ErrorBand& br, bool lower);
// How the winner's margin over the runner-up (as for bands_overlap) stands against their bands,
// as the end of a sentence: no band (made without the validation), a band that backs no margin
// (ErrorBand::backs_margin), overlapping bands (a tie), or a margin larger than both.
std::string margin_verdict_text(double w, const ErrorBand& bw, double r, const ErrorBand& br,
                                bool lower);

// "1x L40S (48 GB), generic-2s-ddr5 with 384 GB DRAM, 1x micron-9550 NVMe; opt-30b fp16 weights;
// inference batch 200, prompt 512, 32 generated tokens; weights on nvme, KV cache on cpu".
// `sized_dram_gb`: the run's dram_sized_gb metric, the DRAM energy and cost counted when the
// scenario left the host's DRAM to the catalog (the catalog's figure is what the platform takes).
std::string describe_configuration(const Scenario& s,
                                   std::optional<double> sized_dram_gb = std::nullopt);

// The runs that are candidates for the recommendation on `metric`, best first (indices into
// runs): they fit and have the metric.
std::vector<std::size_t> ranking(const ReportInput& in, const std::string& metric,
                                 bool lower_is_better);

// The summary as report parts (reports/charts.hpp): HTML, each followed by its chart, if any.
std::vector<ReportPart> decision_html(const ReportInput& in,
                                        const std::vector<std::string>& labels);
std::string decision_markdown(const ReportInput& in, const std::vector<std::string>& labels);

}  // namespace tiersim::reports
