#include "study/whatif.hpp"

#include <algorithm>
#include <tuple>
#include <cmath>
#include <map>
#include <mutex>

#include "common/progress.hpp"
#include "config/options.hpp"
#include "model/errors.hpp"
#include "model/stack.hpp"
#include "study/parallel.hpp"
#include "study/sensitivity.hpp"

namespace tiersim::whatif {
namespace {

// The search stopped at Options::max_points (caught in solve()).
struct BudgetReached {};

// Compass steps on the [0, 1] scale: from a quarter of a range down to 1/128 of it (1/128 of a
// 16x range is a factor of 1.022).
constexpr double kFirstStep = 0.25;
constexpr double kLastStep = 1.0 / 128;
// Forward-difference step of the linearisation (a factor of 1.09 on a 16x range).
constexpr double kGradientStep = 1.0 / 32;
// Bisection steps along a ray or one input's range (a 2^-10 fraction of the bracket).
constexpr int kBisections = 10;
constexpr int kLinearisations = 10;

// One varied input as the search sees it.
struct Active {
  std::size_t index = 0;  // into Result::inputs
  const config::Option* option = nullptr;
  bool apply_a = false, apply_b = false;
  double base_a = 0, base_b = 0;
  double log_low = 0, log_width = 1;  // ln(low factor), ln(high / low)
  bool integer = false;
};

std::string scope_prefix(Scope s) {
  return s == Scope::kA ? "a:" : s == Scope::kB ? "b:" : "";
}

// "rises", "falls", "flat", "rises then falls", ...: the order of the signs of successive
// differences, equal neighbours (within 1e-9 relative) ignored.
std::string trend_of(const std::vector<double>& ys) {
  if (ys.size() < 2) return "";
  std::vector<int> moves;
  for (std::size_t i = 1; i < ys.size(); ++i) {
    const double d = ys[i] - ys[i - 1];
    if (std::fabs(d) <= 1e-9 * std::max(std::fabs(ys[i]), std::fabs(ys[i - 1]))) continue;
    const int m = d > 0 ? 1 : -1;
    if (moves.empty() || moves.back() != m) moves.push_back(m);
  }
  if (moves.empty()) return "flat";
  if (moves.size() > 2) return "not monotone";
  std::string t = moves[0] > 0 ? "rises" : "falls";
  if (moves.size() == 2) t += moves[1] > 0 ? " then rises" : " then falls";
  return t;
}

// One combination of the choice inputs' values: the settings it adds to each configuration, and
// its share of the distance.
struct Combo {
  std::vector<std::string> values;  // per choice input
  std::vector<std::string> set_a, set_b;
  double distance2 = 0;              // the number of choices changed
  std::vector<std::string> point_choices;  // per input: the value where changed, else ""
};

// The configurations, read once, and every simulation's outcome by its settings: shared by the
// searches of all combinations (a combination that changes only B's stack reuses A's runs).
struct Shared {
  Shared(const config::VariantSpec& a, const config::VariantSpec& b, const Options& opt)
      : source_a(a, opt.load), source_b(b, opt.load) {}
  config::VariantSource source_a, source_b;
  std::mutex mu;
  std::map<std::string, sensitivity::Evaluation> cache_a, cache_b;
};

class Search {
 public:
  Search(const Options& opt, Result& r, const Combo& combo, Shared& shared)
      : opt_(opt), r_(r), combo_(combo), shared_(shared) {}

  void setup(const config::VariantSpec& a, const config::VariantSpec& b);
  void run();

 private:
  double factor(std::size_t k, double u) const {
    return std::exp(act_[k].log_low + u * act_[k].log_width);
  }
  double value(const Active& ac, bool for_a, double f) const {
    double v = (for_a ? ac.base_a : ac.base_b) * f;
    if (ac.integer) v = std::round(v);
    return std::clamp(v, ac.option->min, ac.option->max);
  }
  // Snaps integer inputs to the value the first configuration that uses them gets, so a point's
  // factors and distance are those of the values simulated.
  std::vector<double> snap(std::vector<double> u) const;
  std::vector<std::string> settings(const std::vector<double>& u, bool for_a) const;
  double distance(const std::vector<double>& u) const;
  sensitivity::Evaluation eval_one(bool for_a, const std::vector<double>& u);
  std::vector<Point> eval(std::vector<std::vector<double>> us, const std::string& phase);
  Point to_point(const std::vector<double>& u, const sensitivity::Evaluation& ea,
                 const sensitivity::Evaluation& eb) const;

  void scan_inputs();
  void alone();
  void raise();
  bool compass(std::vector<double>& cur, double& cur_ratio);
  bool check_best(std::vector<double>& cur, double& cur_ratio);
  void tidy(std::vector<double> cur, double cur_ratio);
  void nearest();
  void boundary_on_ray(const std::vector<double>& to);

  const Options& opt_;
  Result& r_;
  const Combo& combo_;
  Shared& shared_;
  std::vector<Active> act_;
  std::vector<double> u0_;
  std::optional<std::vector<double>> nearest_u_, best_u_;
};

void Search::setup(const config::VariantSpec& a, const config::VariantSpec& b) {
  Scenario sa = shared_.source_a.load(), sb = shared_.source_b.load();
  r_.a = a.name.empty() ? sa.name : a.name;
  r_.b = b.name.empty() ? sb.name : b.name;
  const std::vector<Input> inputs = opt_.inputs.empty() ? default_inputs() : opt_.inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    InputReport rep;
    rep.input = inputs[i];
    const Input& in = inputs[i];
    if (!in.choices.empty()) {
      // A choice input: its value is fixed for this search (the combination's).
      const config::Option* oa = config::find_option(in.key, sa.kind);
      const config::Option* ob = config::find_option(in.key, sb.kind);
      rep.used_a = oa && in.scope != Scope::kB && config::option_scalar(*oa, sa, rep.text_a);
      rep.used_b = ob && in.scope != Scope::kA && config::option_scalar(*ob, sb, rep.text_b);
      if (!rep.used_a && !rep.used_b) rep.skipped = "applies to neither configuration";
      r_.inputs.push_back(rep);
      continue;
    }
    const config::Option* oa = sensitivity::numeric_option(in.key, sa.kind);
    const config::Option* ob = sensitivity::numeric_option(in.key, sb.kind);
    std::optional<double> va, vb;
    if (oa) va = sensitivity::value_of(*oa, sa);
    if (ob) vb = sensitivity::value_of(*ob, sb);
    // A key a configuration does not use (unset, or 0: a drive price without drives) stays as it
    // is there, as in the sensitivity and break-even studies.
    rep.used_a = va && *va > 0 && in.scope != Scope::kB;
    rep.used_b = vb && *vb > 0 && in.scope != Scope::kA;
    rep.value_a = va.value_or(0);
    rep.value_b = vb.value_or(0);
    const config::Option* o = rep.used_a ? oa : rep.used_b ? ob : nullptr;
    if (!o) {
      rep.skipped = in.scope == Scope::kBoth
                        ? "used by neither configuration (unset or 0)"
                        : std::string("not used by '") + (in.scope == Scope::kA ? r_.a : r_.b) +
                              "' (unset or 0)";
      r_.inputs.push_back(rep);
      continue;
    }
    rep.unit = o->unit;
    rep.integer = o->type == config::ValueType::kInt;
    // Each value stays inside the key's valid range (a duty cycle cannot pass 1).
    double lo = in.low_factor, hi = in.high_factor;
    const std::pair<bool, double> uses[] = {{rep.used_a, rep.value_a}, {rep.used_b, rep.value_b}};
    for (const auto& [used, base] : uses) {
      if (!used) continue;
      double mn = o->min / base;
      if (o->min_exclusive) mn *= 1 + 1e-9;
      if (rep.integer) mn = std::max(mn, 0.5 / base);  // rounds to at least 1
      const double mx = o->max / base;
      if (lo < mn) lo = mn, rep.clamped = true;
      if (hi > mx) hi = mx, rep.clamped = true;
    }
    if (!(lo > 0) || !(hi > lo * (1 + 1e-9))) {
      rep.skipped = "its range is empty inside the key's valid range " + config::range_text(*o);
      r_.inputs.push_back(rep);
      continue;
    }
    rep.input.low_factor = lo;
    rep.input.high_factor = hi;
    Active ac;
    ac.index = i;
    ac.option = o;
    ac.apply_a = rep.used_a;
    ac.apply_b = rep.used_b;
    ac.base_a = rep.value_a;
    ac.base_b = rep.value_b;
    ac.log_low = std::log(lo);
    ac.log_width = std::log(hi / lo);
    ac.integer = rep.integer;
    act_.push_back(ac);
    r_.inputs.push_back(rep);
  }
  const bool choice_varied = std::any_of(r_.inputs.begin(), r_.inputs.end(), [](const auto& x) {
    return !x.input.choices.empty() && x.skipped.empty();
  });
  if (act_.empty() && !choice_varied)
    throw ConfigError("--vary", 0, inputs.empty() ? "" : inputs.front().key,
                      "no input can be varied: each is unused by '" + r_.a + "' and '" + r_.b +
                          "' or has an empty range");
  for (const auto& ac : act_) u0_.push_back(-ac.log_low / ac.log_width);
}

std::vector<double> Search::snap(std::vector<double> u) const {
  for (std::size_t k = 0; k < act_.size(); ++k) {
    const Active& ac = act_[k];
    if (!ac.integer) continue;
    const bool a = ac.apply_a;
    const double v = value(ac, a, factor(k, u[k]));
    const double f = v / (a ? ac.base_a : ac.base_b);
    u[k] = (std::log(f) - ac.log_low) / ac.log_width;
  }
  return u;
}

std::vector<std::string> Search::settings(const std::vector<double>& u, bool for_a) const {
  std::vector<std::string> out = for_a ? combo_.set_a : combo_.set_b;
  for (std::size_t k = 0; k < act_.size(); ++k) {
    const Active& ac = act_[k];
    if (!(for_a ? ac.apply_a : ac.apply_b)) continue;
    // The as-given value is not set again: the point is then the configuration as given.
    if (std::fabs(u[k] - u0_[k]) < 1e-12) continue;
    out.push_back(sensitivity::override_text(ac.option->path, value(ac, for_a, factor(k, u[k])),
                                             ac.integer));
  }
  return out;
}

double Search::distance(const std::vector<double>& u) const {
  double d = combo_.distance2;
  for (std::size_t k = 0; k < u.size(); ++k) d += (u[k] - u0_[k]) * (u[k] - u0_[k]);
  return std::sqrt(d);
}

sensitivity::Evaluation Search::eval_one(bool for_a, const std::vector<double>& u) {
  const std::vector<std::string> set = settings(u, for_a);
  std::string key;
  for (const auto& s : set) key += s + "\n";
  auto& cache = for_a ? shared_.cache_a : shared_.cache_b;
  {
    std::lock_guard lock(shared_.mu);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  if (opt_.stop && opt_.stop->load()) throw Interrupted("whatif: interrupted");
  sensitivity::Evaluation e = sensitivity::evaluate(for_a ? shared_.source_a : shared_.source_b,
                                                    set, opt_.metric, opt_.stop);
  std::lock_guard lock(shared_.mu);
  ++r_.simulations;
  if (r_.unit.empty()) r_.unit = e.unit;
  cache.emplace(key, e);
  return e;
}

Point Search::to_point(const std::vector<double>& u, const sensitivity::Evaluation& ea,
                       const sensitivity::Evaluation& eb) const {
  Point p;
  p.factors.assign(r_.inputs.size(), 1.0);
  p.choices = combo_.point_choices;
  for (std::size_t k = 0; k < act_.size(); ++k) p.factors[act_[k].index] = factor(k, u[k]);
  p.distance = distance(u);
  p.metric_a = ea.metric;
  p.metric_b = eb.metric;
  if (!ea.error.empty()) p.error = r_.a + ": " + ea.error;
  if (!eb.error.empty()) p.error += (p.error.empty() ? "" : "; ") + r_.b + ": " + eb.error;
  if (p.metric_a && p.metric_b) {
    const double a = *p.metric_a, b = *p.metric_b;
    if (a > 0 && b > 0) {
      p.ratio = opt_.higher_is_better ? a / b : b / a;
      p.meets = *p.ratio >= opt_.ratio;
    } else {
      p.error = opt_.metric + " is not positive (" + r_.a + " " + config::format_number(a) +
                ", " + r_.b + " " + config::format_number(b) + "): no ratio";
    }
  }
  return p;
}

// Evaluates a batch of points (in parallel), records the best and nearest, reports progress;
// throws BudgetReached after evaluating what the budget allows.
std::vector<Point> Search::eval(std::vector<std::vector<double>> us, const std::string& phase) {
  for (auto& u : us) {
    for (double& x : u) x = std::clamp(x, 0.0, 1.0);
    u = snap(std::move(u));
  }
  const int left = opt_.max_points - r_.points;
  const bool truncated = int(us.size()) > left;
  if (truncated) us.resize(std::size_t(std::max(0, left)));
  std::vector<Point> out(us.size());
  study::parallel_for(us.size(), opt_.threads, [&](std::size_t i) {
    const sensitivity::Evaluation ea = eval_one(true, us[i]);
    const sensitivity::Evaluation eb = eval_one(false, us[i]);
    out[i] = to_point(us[i], ea, eb);
  });
  r_.points += int(us.size());
  for (std::size_t i = 0; i < us.size(); ++i) {
    const Point& p = out[i];
    if (!p.ratio) continue;
    if (!best_u_ || *p.ratio > *r_.best.ratio) {
      r_.best = p;
      best_u_ = us[i];
    }
    if (p.meets && (!nearest_u_ || p.distance < r_.nearest.distance)) {
      r_.nearest = p;
      nearest_u_ = us[i];
      r_.found = true;
    }
  }
  if (opt_.on_progress) {
    Progress pr;
    pr.phase = phase;
    pr.points = r_.points;
    pr.max_points = opt_.max_points;
    pr.best_ratio = r_.best.ratio.value_or(0);
    opt_.on_progress(pr);
  }
  if (truncated) throw BudgetReached{};
  return out;
}

void Search::scan_inputs() {
  const int n = std::max(2, opt_.scan_points);
  std::vector<std::vector<double>> us;
  std::vector<std::size_t> owner;
  for (std::size_t k = 0; k < act_.size(); ++k)
    for (int j = 0; j < n; ++j) {
      std::vector<double> u = u0_;
      u[k] = double(j) / double(n - 1);
      us.push_back(u);
      owner.push_back(k);
    }
  const std::vector<Point> ps = eval(us, "scan each input alone");
  for (std::size_t k = 0; k < act_.size(); ++k) {
    InputReport& rep = r_.inputs[act_[k].index];
    // The samples and the as-given point, low to high factor.
    std::vector<std::pair<double, const Point*>> line;
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (owner[i] == k) line.emplace_back(ps[i].factors[act_[k].index], &ps[i]);
    if (u0_[k] >= 0 && u0_[k] <= 1) line.emplace_back(1.0, &r_.as_given);
    std::stable_sort(line.begin(), line.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<double> ys;
    bool missing_after_fit = false;
    for (const auto& [f, p] : line) {
      // Whole-number inputs map several scanned factors to one value: list it once.
      if (!rep.scan.empty() && std::fabs(rep.scan.back().factor - f) <= 1e-12 * f) continue;
      rep.scan.push_back({f, p->ratio, p->error});
      if (p->ratio) {
        if (missing_after_fit) rep.gaps = true;
        ys.push_back(*p->ratio);
        if (!rep.fits_low) rep.fits_low = f;
        rep.fits_high = f;
      } else if (rep.fits_low) {
        missing_after_fit = true;
      }
    }
    rep.trend = trend_of(ys);
  }
}

// For each input alone: the factor nearest the as-given value that reaches the target, between
// the nearest scanned sample that reaches it and its neighbour towards the as-given value.
void Search::alone() {
  struct Bracket {
    std::size_t k;
    double fail_u, meet_u;
  };
  std::vector<Bracket> br;
  for (std::size_t k = 0; k < act_.size(); ++k) {
    const InputReport& rep = r_.inputs[act_[k].index];
    std::optional<double> meet_u;
    for (const auto& s : rep.scan) {
      if (!s.ratio || *s.ratio < opt_.ratio) continue;
      const double u = (std::log(s.factor) - act_[k].log_low) / act_[k].log_width;
      if (!meet_u || std::fabs(u - u0_[k]) < std::fabs(*meet_u - u0_[k])) meet_u = u;
    }
    if (!meet_u) continue;
    // The neighbouring sample towards the as-given point (the as-given point fails the target).
    double fail_u = u0_[k];
    for (const auto& s : rep.scan) {
      const double u = (std::log(s.factor) - act_[k].log_low) / act_[k].log_width;
      if ((u - fail_u) * (*meet_u - u) > 0 && (u - u0_[k]) * (*meet_u - u0_[k]) > 0 &&
          !(s.ratio && *s.ratio >= opt_.ratio))
        fail_u = u;
    }
    br.push_back({k, fail_u, *meet_u});
  }
  for (int it = 0; it < kBisections && !br.empty(); ++it) {
    std::vector<std::vector<double>> us;
    for (const auto& b : br) {
      std::vector<double> u = u0_;
      u[b.k] = 0.5 * (b.fail_u + b.meet_u);
      us.push_back(u);
    }
    const std::vector<Point> ps = eval(us, "each input alone");
    for (std::size_t i = 0; i < br.size(); ++i)
      (ps[i].meets ? br[i].meet_u : br[i].fail_u) = 0.5 * (br[i].fail_u + br[i].meet_u);
  }
  for (const auto& b : br) {
    std::vector<double> u = u0_;
    u[b.k] = b.meet_u;
    u = snap(u);
    r_.inputs[act_[b.k].index].alone = factor(b.k, u[b.k]);
  }
}

// Compass search that raises the ratio from `cur` until a point reaches the target or the step
// falls below kLastStep. True when a point reached the target.
bool Search::compass(std::vector<double>& cur, double& cur_ratio) {
  for (double step = kFirstStep; step >= kLastStep && !r_.found;) {
    std::vector<std::vector<double>> polls;
    for (std::size_t k = 0; k < act_.size(); ++k)
      for (const double s : {-step, step}) {
        std::vector<double> u = cur;
        u[k] = std::clamp(u[k] + s, 0.0, 1.0);
        if (u[k] != cur[k]) polls.push_back(u);
      }
    if (polls.empty()) break;
    const std::vector<Point> ps = eval(polls, "raise the ratio");
    std::optional<std::size_t> up;
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (ps[i].ratio && *ps[i].ratio > cur_ratio * (1 + 1e-12) &&
          (!up || *ps[i].ratio > *ps[*up].ratio))
        up = i;
    if (up) {
      cur = snap(polls[*up]);
      cur_ratio = *ps[*up].ratio;
    } else {
      step /= 2;
    }
  }
  return r_.found;
}

// Moves every input alone from the best point to both ends and the middle of its range. True
// when one of them raised the ratio (then `cur` is the better point).
bool Search::check_best(std::vector<double>& cur, double& cur_ratio) {
  std::vector<std::vector<double>> us;
  for (std::size_t k = 0; k < act_.size(); ++k)
    for (const double x : {0.0, 0.5, 1.0}) {
      std::vector<double> u = cur;
      u[k] = x;
      if (std::fabs(snap(u)[k] - cur[k]) > 1e-12) us.push_back(u);
    }
  const std::vector<Point> ps = eval(us, "check the best point");
  std::optional<std::size_t> up;
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps[i].ratio && *ps[i].ratio > cur_ratio * (1 + 1e-12) &&
        (!up || *ps[i].ratio > *ps[*up].ratio))
      up = i;
  if (!up) return false;
  cur = snap(us[*up]);
  cur_ratio = *ps[*up].ratio;
  return true;
}

void Search::raise() {
  if (r_.found || !best_u_) return;
  // The corner each input's scan favours: its best sample, where it beats the as-given ratio
  // (an input that does not move the ratio stays as given).
  std::vector<double> corner = u0_;
  for (std::size_t k = 0; k < act_.size(); ++k) {
    const InputReport& rep = r_.inputs[act_[k].index];
    std::optional<double> best_f;
    double best_r = r_.as_given.ratio.value_or(0) * (1 + 1e-12);
    for (const auto& s : rep.scan)
      if (s.ratio && *s.ratio > best_r) best_r = *s.ratio, best_f = s.factor;
    if (best_f) corner[k] = (std::log(*best_f) - act_[k].log_low) / act_[k].log_width;
  }
  eval({corner}, "raise the ratio");
  if (r_.found) return;
  std::vector<double> cur = *best_u_;
  double cur_ratio = *r_.best.ratio;
  for (int round = 0; round < 4; ++round) {
    if (compass(cur, cur_ratio)) return;
    if (!check_best(cur, cur_ratio)) {
      r_.best_single_checked = true;
      break;
    }
    if (r_.found) return;
  }
  tidy(cur, cur_ratio);
}

// Puts back, one at a time, each input of the best point whose value as given gives the same
// ratio (an input the search moved that does not matter there), so the best point shows only the
// changes it needs.
void Search::tidy(std::vector<double> cur, double cur_ratio) {
  for (std::size_t k = 0; k < act_.size(); ++k) {
    if (std::fabs(cur[k] - u0_[k]) < 1e-12) continue;
    std::vector<double> u = cur;
    u[k] = u0_[k];
    const Point p = eval({u}, "check the best point")[0];
    if (!p.ratio || *p.ratio < cur_ratio * (1 - 1e-12)) continue;
    cur = u;
    cur_ratio = *p.ratio;
    // The same ratio nearer the as-given point is the one to report.
    r_.best = p;
    best_u_ = u;
  }
}

// The first point from the as-given point towards `to` (which reaches the target) that reaches
// it: a scan of the ray at eighths, then bisection. eval() keeps the nearest point that reaches
// the target.
void Search::boundary_on_ray(const std::vector<double>& to) {
  auto at = [&](double t) {
    std::vector<double> u(u0_.size());
    for (std::size_t k = 0; k < u.size(); ++k) u[k] = u0_[k] + t * (to[k] - u0_[k]);
    return u;
  };
  std::vector<std::vector<double>> us;
  for (int j = 1; j <= 7; ++j) us.push_back(at(j / 8.0));
  const std::vector<Point> ps = eval(us, "nearest point");
  double lo = 0, hi = 1;
  for (std::size_t j = 0; j < ps.size(); ++j)
    if (ps[j].meets) {
      hi = double(j + 1) / 8;
      lo = double(j) / 8;
      break;
    }
  if (hi == 1) lo = 7.0 / 8;
  for (int it = 0; it < kBisections; ++it) {
    const double mid = 0.5 * (lo + hi);
    (eval({at(mid)}, "nearest point")[0].meets ? hi : lo) = mid;
  }
}

void Search::nearest() {
  if (!r_.found || r_.nearest.distance == 0) return;
  boundary_on_ray(*nearest_u_);
  double last = r_.nearest.distance;
  const double ln_target = std::log(opt_.ratio);
  for (int it = 0; it < kLinearisations; ++it) {
    const std::vector<double> q = *nearest_u_;
    const double hq = std::log(*r_.nearest.ratio);
    // The gradient of ln(ratio) at q by one-sided differences (inwards at a bound).
    std::vector<std::vector<double>> us;
    std::vector<double> steps;
    for (std::size_t k = 0; k < act_.size(); ++k) {
      std::vector<double> u = q;
      const double h = q[k] + kGradientStep <= 1 ? kGradientStep : -kGradientStep;
      u[k] += h;
      u = snap(u);
      steps.push_back(u[k] - q[k]);
      us.push_back(u);
    }
    const std::vector<Point> ps = eval(us, "nearest point");
    std::vector<double> g(act_.size(), 0.0);
    for (std::size_t k = 0; k < act_.size(); ++k)
      if (ps[k].ratio && std::fabs(steps[k]) > 1e-12)
        g[k] = (std::log(*ps[k].ratio) - hq) / steps[k];
    // The point nearest the as-given one on the linearised surface g.(y - q) = ln target - h(q),
    // inside the box: y = u0 + clamp(lambda g), lambda found by bisection (g.d rises with it).
    double r = ln_target - hq;
    for (std::size_t k = 0; k < g.size(); ++k) r += g[k] * (q[k] - u0_[k]);
    if (!(r > 0)) break;  // the linearisation says the as-given point would do: it cannot help
    auto d_of = [&](double lambda) {
      std::vector<double> d(g.size());
      for (std::size_t k = 0; k < g.size(); ++k)
        d[k] = std::clamp(lambda * g[k], -u0_[k], 1 - u0_[k]);
      return d;
    };
    auto gd = [&](double lambda) {
      const auto d = d_of(lambda);
      double s = 0;
      for (std::size_t k = 0; k < g.size(); ++k) s += g[k] * d[k];
      return s;
    };
    double lo = 0, hi = 1;
    for (int j = 0; j < 60 && gd(hi) < r; ++j) hi *= 2;
    for (int j = 0; j < 60; ++j) {
      const double mid = 0.5 * (lo + hi);
      (gd(mid) < r ? lo : hi) = mid;
    }
    const auto d = d_of(hi);
    std::vector<double> y(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) y[k] = u0_[k] + d[k];
    // The linearisation is exact only near q: try the ray through y a little short and beyond.
    std::vector<std::vector<double>> ray;
    for (const double t : {0.9, 1.0, 1.1, 1.25, 1.5, 2.0}) {
      std::vector<double> u(g.size());
      for (std::size_t k = 0; k < g.size(); ++k) u[k] = u0_[k] + t * d[k];
      ray.push_back(u);
    }
    const std::vector<Point> rp = eval(ray, "nearest point");
    std::optional<std::size_t> first;
    for (std::size_t j = 0; j < rp.size(); ++j)
      if (rp[j].meets) {
        first = j;
        break;
      }
    if (!first) break;
    boundary_on_ray(ray[*first]);
    if (r_.nearest.distance > last - 1e-4) break;
    last = r_.nearest.distance;
  }
}

void Search::run() {
  // The as-given point.
  r_.as_given = eval({u0_}, "as given")[0];
  if (!r_.best.ratio) r_.best = r_.as_given;
  if (r_.as_given.meets) return;
  scan_inputs();
  alone();
  raise();
  nearest();
}

}  // namespace

std::vector<Input> default_inputs() {
  // The assumptions a buyer or a vendor's claim can move: street prices (DRAM and NAND contract
  // prices swing by tens of percent a quarter), the electricity tariff, the rates a datasheet
  // gives but a software stack may not reach, how many drives, and the workload's shape.
  return {
      {"economics.prices.gpu_usd", Scope::kBoth, 0.25, 4, "GPU price", {}},
      {"economics.prices.platform_usd", Scope::kBoth, 0.25, 4, "server (platform) price", {}},
      {"economics.prices.dram_usd_per_gb", Scope::kBoth, 0.25, 4, "DRAM price per GB", {}},
      {"economics.prices.drive_usd", Scope::kBoth, 0.25, 4, "NVMe drive price", {}},
      {"economics.usd_per_kwh", Scope::kBoth, 0.25, 4, "electricity price", {}},
      {"hardware.gpu.fp16_tflops", Scope::kBoth, 0.25, 4, "GPU achievable FP16 rate", {}},
      {"hardware.gpu.pcie_h2d_gbps", Scope::kBoth, 0.25, 4, "PCIe host-to-GPU rate", {}},
      {"hardware.nvme.read_gbps", Scope::kBoth, 0.25, 4, "NVMe read bandwidth per drive", {}},
      {"hardware.host.dram_gbps", Scope::kBoth, 0.25, 4, "host DRAM bandwidth", {}},
      {"hardware.nvme.count", Scope::kBoth, 1, 8, "NVMe drives", {}},
      {"workload.batch", Scope::kBoth, 0.25, 4, "batch", {}},
      {"workload.prompt_tokens", Scope::kBoth, 0.25, 4, "prompt length", {}},
      {"workload.gen_tokens", Scope::kBoth, 0.25, 4, "generated length", {}},
      // What runs the baseline: its software stack (model/stack.hpp), each value in turn.
      {"policy.stack", Scope::kB, 1, 1, "B's software stack", stack_names()},
  };
}

Input parse_input(const std::string& text, Scope scope, const std::string& where) {
  Input in;
  in.scope = scope;
  const auto eq = text.find('=');
  in.key = text.substr(0, eq);
  in.what = in.key;
  const config::Option* choice = nullptr;
  for (const config::Option* o : config::find_options(in.key))
    if (o->type == config::ValueType::kChoice) choice = o;
  if (choice) {
    if (eq == std::string::npos) {
      in.choices = choice->choices;
      return in;
    }
    const std::string list = text.substr(eq + 1);
    for (std::size_t from = 0; from <= list.size();) {
      const auto comma = std::min(list.find(',', from), list.size());
      const std::string v = config::to_lower(list.substr(from, comma - from));
      const auto it = std::find_if(choice->choices.begin(), choice->choices.end(),
                                   [&](const std::string& c) { return config::to_lower(c) == v; });
      if (it == choice->choices.end())
        throw ConfigError(where, 0, in.key,
                          "'" + v + "' is not one of its values" +
                              config::did_you_mean(v, choice->choices) +
                              "; values: " + config::join(choice->choices) +
                              " (KEY=V1,V2 for a choice key)");
      if (std::find(in.choices.begin(), in.choices.end(), *it) == in.choices.end())
        in.choices.push_back(*it);
      from = comma + 1;
    }
    return in;
  }
  sensitivity::check_numeric_key(in.key, where);
  for (const auto& d : default_inputs())
    if (d.key == in.key) {
      in.what = d.what;
      in.low_factor = d.low_factor;
      in.high_factor = d.high_factor;
    }
  if (eq == std::string::npos) return in;
  const std::string f = text.substr(eq + 1);
  std::tie(in.low_factor, in.high_factor) = sensitivity::parse_factor_range(
      f, {in.key, text, where, "the value as given", "0.5:2"});
  // The answer is a change from the configurations as given, so the range holds them.
  if (!(in.low_factor > 0 && in.low_factor <= 1 && 1 <= in.high_factor &&
        in.low_factor < in.high_factor))
    throw ConfigError(where, 0, in.key,
                      "need 0 < LOW <= 1 <= HIGH, LOW < HIGH (factors of the value as given), got '" +
                          f + "'");
  return in;
}

std::string input_label(const Input& in) { return scope_prefix(in.scope) + in.key; }

namespace {

// Every combination of the choice inputs' values, the values as given first (a single empty
// combination without choice inputs).
std::vector<Combo> choice_combos(const config::VariantSpec& a, const config::VariantSpec& b,
                                 const Options& options, const std::vector<Input>& inputs) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].choices.empty()) idx.push_back(i);
  Combo first;
  first.point_choices.assign(inputs.size(), "");
  if (idx.empty()) return {first};
  Scenario sa = config::load_variant(a, options.load), sb = config::load_variant(b, options.load);
  // Per choice input: its value as given in each configuration that uses it ("" = unused), and
  // the values to try, the one as given first.
  struct Axis {
    std::size_t input;
    std::string given_a, given_b;
    std::vector<std::string> values;
  };
  std::vector<Axis> axes;
  std::size_t count = 1;
  for (const std::size_t i : idx) {
    const Input& in = inputs[i];
    Axis ax{i, "", "", {}};
    const config::Option* oa = config::find_option(in.key, sa.kind);
    const config::Option* ob = config::find_option(in.key, sb.kind);
    if (!(oa && in.scope != Scope::kB && config::option_scalar(*oa, sa, ax.given_a)))
      ax.given_a.clear();
    if (!(ob && in.scope != Scope::kA && config::option_scalar(*ob, sb, ax.given_b)))
      ax.given_b.clear();
    const std::string given = !ax.given_a.empty() ? ax.given_a : ax.given_b;
    if (given.empty()) continue;  // used by neither: reported as skipped by the search
    ax.values.push_back(given);
    for (const auto& v : in.choices)
      if (config::to_lower(v) != config::to_lower(given)) ax.values.push_back(v);
    count *= ax.values.size();
    axes.push_back(ax);
  }
  // Each combination is a search of its own: a few dozen at most.
  constexpr std::size_t kMaxCombos = 64;
  if (count > kMaxCombos)
    throw ConfigError("--vary", 0, inputs[idx.front()].key,
                      "the choice inputs make " + std::to_string(count) +
                          " combinations; at most " + std::to_string(kMaxCombos) +
                          " (name fewer values, KEY=V1,V2)");
  std::vector<Combo> out;
  for (std::size_t n = 0; n < count; ++n) {
    Combo c;
    c.point_choices.assign(inputs.size(), "");
    std::size_t rest = n;
    for (const Axis& ax : axes) {
      const std::string& v = ax.values[rest % ax.values.size()];
      rest /= ax.values.size();
      c.values.push_back(v);
      const std::string& key = inputs[ax.input].key;
      bool changed = false;
      if (!ax.given_a.empty() && config::to_lower(v) != config::to_lower(ax.given_a)) {
        c.set_a.push_back(key + "=" + v);
        changed = true;
      }
      if (!ax.given_b.empty() && config::to_lower(v) != config::to_lower(ax.given_b)) {
        c.set_b.push_back(key + "=" + v);
        changed = true;
      }
      if (changed) {
        c.distance2 += 1;
        c.point_choices[ax.input] = v;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

Result solve(const config::VariantSpec& a, const config::VariantSpec& b, const Options& options) {
  if (!(options.ratio > 0))
    throw ConfigError("--ratio", 0, "ratio",
                      "must be > 0, got " + config::format_number(options.ratio));
  if (options.max_points < 1)
    throw ConfigError("--max-points", 0, "max-points", "must be at least 1");
  sensitivity::check_metric_name(options.metric, "--metric");
  const double t0 = monotonic_s();
  const std::vector<Input> inputs = options.inputs.empty() ? default_inputs() : options.inputs;
  const std::vector<Combo> combos = choice_combos(a, b, options, inputs);
  Shared shared(a, b, options);
  Result r;
  std::vector<ChoiceOutcome> outcomes;
  int points = 0, simulations = 0;
  for (std::size_t c = 0; c < combos.size(); ++c) {
    // Each combination searches with an equal share of the points left.
    Options o = options;
    o.inputs = inputs;
    o.max_points = (options.max_points - points) / int(combos.size() - c);
    if (options.on_progress)
      o.on_progress = [&, c](Progress p) {
        // Progress over the whole search, naming the combination after the first.
        p.points += points;
        p.max_points = options.max_points;
        if (c > 0) p.phase = config::join(combos[c].values, ", ") + ": " + p.phase;
        options.on_progress(p);
      };
    Result rc;
    rc.metric = options.metric;
    rc.higher_is_better = options.higher_is_better;
    rc.target = options.ratio;
    ChoiceOutcome out;
    out.values = combos[c].values;
    Search s(o, rc, combos[c], shared);
    s.setup(a, b);
    if (o.max_points < 1) {
      rc.budget_reached = true;
    } else {
      try {
        s.run();
      } catch (const BudgetReached&) {
        rc.budget_reached = true;
      } catch (const Interrupted&) {
        rc.interrupted = true;
      }
    }
    points += rc.points;
    simulations += rc.simulations;
    out.found = rc.found;
    out.distance = rc.found ? rc.nearest.distance : 0;
    out.as_given_ratio = rc.as_given.ratio;
    out.best_ratio = rc.best.ratio;
    out.points = rc.points;
    if (!rc.as_given.ratio && !rc.as_given.error.empty()) out.error = rc.as_given.error;
    outcomes.push_back(out);
    if (c == 0) {
      r = rc;  // the values as given: its scans and as-given point are the report's
    } else {
      if (rc.found && (!r.found || rc.nearest.distance < r.nearest.distance)) {
        r.found = true;
        r.nearest = rc.nearest;
      }
      if (rc.best.ratio && (!r.best.ratio || *rc.best.ratio > *r.best.ratio)) {
        r.best = rc.best;
        r.best_single_checked = rc.best_single_checked;
      }
      r.budget_reached = r.budget_reached || rc.budget_reached;
      r.interrupted = rc.interrupted;
      if (r.unit.empty()) r.unit = rc.unit;
    }
    if (rc.interrupted) break;
  }
  r.points = points;
  r.simulations = simulations;
  if (combos.size() > 1) r.choice_outcomes = outcomes;
  r.wall_s = monotonic_s() - t0;
  if (!r.found) r.nearest = Point{};
  // The inputs the best point moved to an end of their range.
  for (std::size_t i = 0; i < r.inputs.size() && r.best.ratio; ++i) {
    const InputReport& rep = r.inputs[i];
    if (!rep.skipped.empty() || !rep.input.choices.empty()) continue;
    const double f = r.best.factors[i];
    if (std::fabs(f - 1) < 1e-12) continue;  // as given: not moved by the search
    if (std::fabs(std::log(f / rep.input.low_factor)) < 1e-9 ||
        std::fabs(std::log(f / rep.input.high_factor)) < 1e-9)
      r.at_bound.push_back(input_label(rep.input));
  }
  return r;
}

std::vector<std::string> point_settings(const Result& r, const Point& p, bool which_a) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.inputs.size() && i < p.factors.size(); ++i) {
    const InputReport& rep = r.inputs[i];
    if (!rep.skipped.empty() || !(which_a ? rep.used_a : rep.used_b)) continue;
    if (!rep.input.choices.empty()) {
      const std::string& given = which_a ? rep.text_a : rep.text_b;
      if (i < p.choices.size() && !p.choices[i].empty() &&
          config::to_lower(p.choices[i]) != config::to_lower(given))
        out.push_back(rep.input.key + "=" + p.choices[i]);
      continue;
    }
    if (std::fabs(p.factors[i] - 1) < 1e-12) continue;
    double v = (which_a ? rep.value_a : rep.value_b) * p.factors[i];
    if (rep.integer) v = std::round(v);
    out.push_back(sensitivity::override_text(rep.input.key, v, rep.integer));
  }
  return out;
}

std::string method_text(const Result& r, const Options& options) {
  std::size_t varied = 0;
  for (const auto& in : r.inputs) varied += in.skipped.empty() && in.input.choices.empty();
  const std::string per_combo =
      r.choice_outcomes.empty()
          ? ""
          : " (for each of the " + std::to_string(r.choice_outcomes.size()) +
                " combinations of the choice inputs' values, a changed choice adding 1)";
  return "distance: each input's factor range mapped to [0, 1] on a log scale, the Euclidean "
         "norm of the change from the values as given (1 = one input moved across its whole "
         "range). Search" + per_combo + ": the as-given point, each of the " +
         std::to_string(varied) + " numeric inputs alone at " + std::to_string(options.scan_points) +
         " points, a compass search raising the ratio, then bisection towards the as-given "
         "point and linearisation at the boundary; " +
         std::to_string(r.points) + " points (limit " + std::to_string(options.max_points) +
         "), " + std::to_string(r.simulations) + " simulations";
}

namespace {

nlohmann::json opt_json(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json();
}

nlohmann::json point_json(const Result& r, const Point& p) {
  nlohmann::json j;
  nlohmann::json factors = nlohmann::json::object();
  nlohmann::json choices = nlohmann::json::object();
  for (std::size_t i = 0; i < r.inputs.size() && i < p.factors.size(); ++i) {
    if (!r.inputs[i].skipped.empty()) continue;
    if (r.inputs[i].input.choices.empty())
      factors[input_label(r.inputs[i].input)] = p.factors[i];
    else if (i < p.choices.size() && !p.choices[i].empty())
      choices[input_label(r.inputs[i].input)] = p.choices[i];
  }
  j["factors"] = factors;
  j["choices"] = choices;
  j["settings_a"] = point_settings(r, p, true);
  j["settings_b"] = point_settings(r, p, false);
  j["metric_a"] = opt_json(p.metric_a);
  j["metric_b"] = opt_json(p.metric_b);
  j["ratio"] = opt_json(p.ratio);
  j["distance"] = p.distance;
  j["meets"] = p.meets;
  if (!p.error.empty()) j["error"] = p.error;
  return j;
}

}  // namespace

nlohmann::json to_json(const Result& r) {
  nlohmann::json j;
  j["a"] = r.a;
  j["b"] = r.b;
  j["metric"] = r.metric;
  j["unit"] = r.unit;
  j["sense"] = r.higher_is_better ? "maximize" : "minimize";
  j["target_ratio"] = r.target;
  j["as_given"] = point_json(r, r.as_given);
  j["found"] = r.found;
  j["nearest"] = r.found ? point_json(r, r.nearest) : nlohmann::json();
  j["best"] = point_json(r, r.best);
  j["at_bound"] = r.at_bound;
  j["best_single_checked"] = r.best_single_checked;
  j["budget_reached"] = r.budget_reached;
  j["interrupted"] = r.interrupted;
  j["points"] = r.points;
  j["simulations"] = r.simulations;
  j["wall_s"] = r.wall_s;
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& in : r.inputs) {
    nlohmann::json x = {{"key", in.input.key},
                        {"label", input_label(in.input)},
                        {"what", in.input.what},
                        {"unit", in.unit},
                        {"low_factor", in.input.low_factor},
                        {"high_factor", in.input.high_factor},
                        {"used_a", in.used_a},
                        {"used_b", in.used_b},
                        {"value_a", in.value_a},
                        {"value_b", in.value_b},
                        {"clamped", in.clamped}};
    if (!in.skipped.empty()) {
      x["skipped"] = in.skipped;
    } else if (!in.input.choices.empty()) {
      x["choices"] = in.input.choices;
      x["text_a"] = in.text_a;
      x["text_b"] = in.text_b;
    } else {
      x["trend"] = in.trend;
      x["fits_low_factor"] = opt_json(in.fits_low);
      x["fits_high_factor"] = opt_json(in.fits_high);
      x["gaps"] = in.gaps;
      x["alone_factor"] = opt_json(in.alone);
      nlohmann::json scan = nlohmann::json::array();
      for (const auto& s : in.scan) {
        nlohmann::json y = {{"factor", s.factor}, {"ratio", opt_json(s.ratio)}};
        if (!s.error.empty()) y["error"] = s.error;
        scan.push_back(y);
      }
      x["scan"] = scan;
    }
    inputs.push_back(x);
  }
  j["inputs"] = inputs;
  nlohmann::json outcomes = nlohmann::json::array();
  for (const auto& c : r.choice_outcomes) {
    nlohmann::json x = {{"values", c.values}, {"found", c.found}, {"points", c.points}};
    x["distance"] = c.found ? nlohmann::json(c.distance) : nlohmann::json();
    x["as_given_ratio"] = opt_json(c.as_given_ratio);
    x["best_ratio"] = opt_json(c.best_ratio);
    if (!c.error.empty()) x["error"] = c.error;
    outcomes.push_back(x);
  }
  j["choice_outcomes"] = outcomes;
  return j;
}

}  // namespace tiersim::whatif
