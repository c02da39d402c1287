// tiersim validate: predicted vs published for every reference scenario.
#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "calibrate/interrupt.hpp"
#include "calibrate/runner.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "model/files.hpp"
#include "replay/replay_suite.hpp"
#include "reports/study_json.hpp"
#include "study/accuracy.hpp"
#include "study/studies.hpp"
#include "study/validation.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim validate [options]\n\n"
      "Runs every scenario under the reference folder (scenarios/reference by default), each of\n"
      "which carries a published measurement, and prints predicted vs published with the error\n"
      "and the mean absolute percentage error (MAPE) per group of mechanisms (the groups of\n"
      "scenarios/validation/groups.yaml): in-sample (every prediction row), over the rows that\n"
      "fed no derived constant, and leave-one-source-out (rows whose source fed no constant\n"
      "they use; scenarios/validation/derivations.yaml), which reports use for error bands.\n"
      "Exits 1 when an established group's in-sample MAPE exceeds --max-mape; provisional groups\n"
      "(mechanism not modelled yet, or newly modelled and outside the bound) do not gate.\n"
      "--write-accuracy keeps the per-group errors and the GPUs and stacks the published rows\n"
      "run on in a file that `tiersim run` quotes (scenarios/validation/accuracy.json; a test\n"
      "fails while the shipped one is out of date).\n\n"
      "options");
  std::string dir, data_dir, target, profile, db, accuracy_file;
  double max_mape = 15.0;
  opts.add_options()("help,h", "show this help")(
      "dir", po::value<std::string>(&dir),
      "folder of reference scenarios (default: <data>/reference)")(
      "data-dir", po::value<std::string>(&data_dir), "folder holding catalog/ and reference/")(
      "max-mape", po::value<double>(&max_mape)->default_value(15.0),
      "fail (exit 1) when an established group's mean absolute percentage error is above this, "
      "in percent")("json", "print the table as JSON")(
      "hardware",
      "instead: replay a fixed suite of offload schedules and checkpoint writers on a "
      "real drive (--target) and compare measured with predicted time")(
      "target", po::value<std::string>(&target), "--hardware: directory on the drive to measure")(
      "profile", po::value<std::string>(&profile),
      "--hardware: device profile to predict with (default: run a quick calibration first)")(
      "db", po::value<std::string>(&db), "--hardware: store the replays in this results database")(
      "write-accuracy", po::value<std::string>(&accuracy_file),
      "also write the per-group errors and the anchored GPUs and stacks to this file, for "
      "`tiersim run` (scenarios/validation/accuracy.json)")(
      "force", "--write-accuracy: replace the file even if tiersim did not write it");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (printed_help(
          vm, opts,
          "  tiersim validate --max-mape 15\n"
          "  tiersim validate --write-accuracy scenarios/validation/accuracy.json --force\n"))
    return kExitOk;
  if (vm.count("hardware")) {
    if (target.empty()) throw Error("--hardware needs --target DIR (a directory on the drive to measure)");
    calibrate::InterruptGuard guard;
    replay::SuiteOptions so;
    so.target_dir = target;
    so.profile_path = profile;
    so.db_path = db;
    so.data_dir = data_dir;
    so.scenario_path = (std::filesystem::path(data_dir.empty() ? config::default_data_dir() : data_dir) /
                        "inference" / "opt30b-l40s-gen5.yaml")
                           .string();
    so.stop = guard.flag();
    try {
      return replay::run_replay_suite(so, std::cout).passed ? kExitOk : kExitFailure;
    } catch (const calibrate::Interrupted&) {
      std::cerr << "tiersim validate: interrupted; replay files removed\n";
      return 130;
    }
  }
  OutputOptions output;
  output.force = vm.count("force") > 0;
  // Before the validation's second of work: a file that may not be replaced is refused first.
  if (!accuracy_file.empty()) check_output_file(accuracy_file, "validation accuracy file", output);
  const validation::ValidationSummary v = studies::run_validate({dir, data_dir, nullptr});
  if (!accuracy_file.empty()) {
    write_output_file(accuracy_file, validation::accuracy_json_text(validation::accuracy_record(v)),
                      "validation accuracy file", output);
    std::cerr << "tiersim validate: wrote " << accuracy_file << "\n";
  }
  const auto& rows = v.rows;
  const double mape = v.mape_pct, worst = v.max_abs_error_pct;

  if (vm.count("json")) {
    std::cout << reports::validation_json(v, max_mape).dump(2) << "\n";
  } else {
    // Columns as wide as their longest entry.
    int case_w = 4, metric_w = 6, group_w = 5;
    for (const auto& r : rows) {
      case_w = std::max(case_w, static_cast<int>(r.case_name.size()));
      metric_w = std::max(metric_w, static_cast<int>(r.metric.size()));
      group_w = std::max(group_w, static_cast<int>(r.group.size()));
    }
    // sample: "cal" a calibration row; "fed" a row a constant was derived from; "src" a row whose
    // source fed a constant it uses (in-sample for leave-one-source-out); "out" neither.
    std::printf("%-*s %-*s %-*s %10s %10s %8s  %s\n", case_w, "case", metric_w, "metric", group_w,
                "group", "published", "predicted", "error", "sample");
    for (const auto& r : rows) {
      const char* sample = r.calibration ? "cal" : r.fed_constant ? "fed" : r.source_in_sample ? "src" : "out";
      std::string note = r.ratio_to.empty() ? "" : "ratio to " + r.ratio_to;
      if (!r.note.empty()) note += (note.empty() ? "" : "; ") + r.note;
      std::printf("%-*s %-*s %-*s %9.3g%s %10.3g %+7.1f%%  %-6s%s%s\n", case_w, r.case_name.c_str(),
                  metric_w, r.metric.c_str(), group_w, r.group.c_str(), r.published,
                  r.approx ? "~" : " ", r.predicted, r.error_pct, sample,
                  note.empty() ? "" : "  ", note.c_str());
    }
    std::printf(
        "\nper group, prediction rows (limit %.1f%% on the in-sample mean of established groups):\n"
        "  in-sample: every prediction row; no-constant: rows that fed no derived constant;\n"
        "  out-of-sample: leave-one-source-out, the figure reports' error bands use\n",
        max_mape);
    std::printf("  %-*s %14s %16s %20s  %s\n", group_w, "group", "in-sample", "no-constant",
                "out-of-sample", "status");
    auto cell = [](std::size_t n, double pct) {
      char buf[32];
      if (n == 0)
        std::snprintf(buf, sizeof buf, "-  (0)");
      else
        std::snprintf(buf, sizeof buf, "%5.1f%% (%zu)", pct, n);
      return std::string(buf);
    };
    for (const auto& g : v.groups) {
      std::string status =
          g.provisional ? "PROVISIONAL, does not gate: " + g.why_provisional
                        : (g.mape_pct <= max_mape ? "established, within limit"
                                                  : "established, OVER LIMIT");
      if (g.refused_rows) status += "; " + std::to_string(g.refused_rows) + " refused (do not fit, 100%)";
      std::printf("  %-*s %14s %16s %20s  %s\n", group_w, g.name.c_str(),
                  cell(g.rows, g.mape_pct).c_str(),
                  cell(g.no_constant_rows, g.no_constant_mape_pct).c_str(),
                  cell(g.out_of_sample_rows, g.out_of_sample_mape_pct).c_str(), status.c_str());
    }
    std::printf(
        "\n%zu cases; all rows together: mean absolute percentage error %.1f%% (max %.1f%%)\n",
        rows.size(), mape, worst);
    std::printf("predictions only (%zu rows, calibration rows left out): %.1f%% (max %.1f%%)\n",
                v.prediction_rows, v.prediction_mape_pct, v.prediction_max_abs_error_pct);
    std::printf("out of sample (%zu rows, leave-one-source-out): %.1f%%\n", v.out_of_sample_rows,
                v.out_of_sample_mape_pct);
    std::printf("%s\n", reports::kOutOfSampleMethod);
    std::printf("(~ marks values read off a published bar chart; see scenarios/reference/README.md)\n");
  }
  return v.established_within(max_mape) ? kExitOk : kExitFailure;
}

}  // namespace tiersim::app
