#include "calibrate/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/errors.hpp"

namespace tiersim::calibrate {

namespace {

constexpr int kTerms = 4;

}  // namespace

SsdDirectionModel fit_direction(const std::vector<FitPoint>& points) {
  std::vector<const FitPoint*> usable;
  for (const auto& p : points) {
    if (p.block_bytes > 0 && p.queue_depth > 0 && p.bandwidth_gbps > 0 && std::isfinite(p.bandwidth_gbps)) {
      usable.push_back(&p);
    }
  }
  if (usable.size() < static_cast<std::size_t>(kTerms)) {
    throw ModelError("device-model fit needs at least 4 measured points, got " + std::to_string(usable.size()));
  }
  const auto n = static_cast<Eigen::Index>(usable.size());
  Eigen::MatrixXd a(n, kTerms);
  for (Eigen::Index i = 0; i < n; ++i) {
    const FitPoint& p = *usable[static_cast<std::size_t>(i)];
    const double t = 1.0 / (p.bandwidth_gbps * 1e9);  // seconds per byte
    a(i, 0) = 1.0 / t;
    a(i, 1) = 1.0 / p.block_bytes / t;
    a(i, 2) = 1.0 / (p.queue_depth * p.block_bytes) / t;
    a(i, 3) = 1.0 / p.queue_depth / t;
  }
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  // The columns differ by ~10 orders of magnitude; scaling them to unit norm keeps QR accurate.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (int j = 0; j < kTerms; ++j) {
    if (scale(j) == 0) scale(j) = 1;
    a.col(j) /= scale(j);
  }

  Eigen::VectorXd best = Eigen::VectorXd::Zero(kTerms);
  double best_residual = std::numeric_limits<double>::infinity();
  // The peak term is always in: without it the model has no bandwidth limit at all.
  for (unsigned mask = 1; mask < (1u << kTerms); mask += 2) {
    std::vector<int> cols;
    for (int j = 0; j < kTerms; ++j) {
      if (mask & (1u << j)) cols.push_back(j);
    }
    Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(b);
    if (!x.allFinite() || (x.array() < 0).any() || !(x(0) > 0)) continue;
    const double residual = (sub * x - b).squaredNorm();
    if (residual < best_residual) {
      best_residual = residual;
      best.setZero();
      for (std::size_t k = 0; k < cols.size(); ++k) best(cols[k]) = x(static_cast<Eigen::Index>(k));
    }
  }
  if (!std::isfinite(best_residual)) {
    throw ModelError("device-model fit found no solution with a positive peak bandwidth");
  }
  SsdDirectionModel m;
  const double c0 = best(0) / scale(0), c1 = best(1) / scale(1), c2 = best(2) / scale(2), c3 = best(3) / scale(3);
  m.peak_gbps = 1.0 / c0 / 1e9;
  m.io_overhead_us = c1 * 1e6;
  m.latency_us = c2 * 1e6;
  m.stream_gbps = c3 > 0 ? 1.0 / c3 / 1e9 : 0.0;
  return m;
}

double mean_abs_error_pct(const SsdDirectionModel& model, const std::vector<FitPoint>& points) {
  double sum = 0;
  int n = 0;
  for (const auto& p : points) {
    if (!(p.bandwidth_gbps > 0)) continue;
    sum += std::abs(model.bandwidth_gbps(p.block_bytes, p.queue_depth) - p.bandwidth_gbps) / p.bandwidth_gbps;
    ++n;
  }
  return n ? 100.0 * sum / n : 0.0;
}

FitReport fit_with_holdout(const std::vector<FitPoint>& points, int heldout_every) {
  std::vector<FitPoint> train, held;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (heldout_every > 1 && (i + 1) % static_cast<std::size_t>(heldout_every) == 0) {
      held.push_back(points[i]);
    } else {
      train.push_back(points[i]);
    }
  }
  FitReport r;
  r.model = fit_direction(train);
  r.fit_points = static_cast<int>(train.size());
  r.heldout_points = static_cast<int>(held.size());
  r.fit_error_pct = mean_abs_error_pct(r.model, train);
  r.heldout_error_pct = held.empty() ? 0.0 : mean_abs_error_pct(r.model, held);
  return r;
}

MixedFitReport fit_mix_interference(const SsdModel& drive,
                                    const std::vector<MixedFitPoint>& points) {
  // Per point: the read fraction, the measured and the shared seconds per 1e9 bytes, and the
  // bound (each direction's own share) below which no x can take the model.
  struct Row {
    const MixedFitPoint* p;
    double f, measured, shared, bound;
  };
  std::vector<Row> rows;
  for (const MixedFitPoint& p : points) {
    const double total = p.read_gbps + p.write_gbps;
    const double r = drive.read.bandwidth_gbps(p.block_bytes, p.queue_depth);
    const double w = drive.write.bandwidth_gbps(p.block_bytes, p.queue_depth);
    if (!(p.read_gbps > 0) || !(p.write_gbps > 0) || !(r > 0) || !(w > 0)) continue;
    const double f = p.read_gbps / total;
    rows.push_back({&p, f, 1.0 / total, f / r + (1.0 - f) / w, std::max(f / r, (1.0 - f) / w)});
  }
  if (rows.empty())
    throw ModelError("no mixed point with both reads and writes to fit the interference on");
  // Least squares over the points where the bound does not hold the model (there x changes
  // nothing); which those are depends on x, so refit until the set settles.
  double x = 0;
  std::vector<bool> unbound(rows.size(), true);
  for (int iteration = 0; iteration < 20; ++iteration) {
    double gg = 0, gr = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!unbound[i]) continue;
      const Row& row = rows[i];
      const double g = 4.0 * row.f * (1.0 - row.f) * row.shared / row.measured;
      gg += g * g;
      gr += g * (row.measured - row.shared) / row.measured;
    }
    if (!(gg > 0)) break;
    x = std::max(-1.0, gr / gg);
    bool changed = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& row = rows[i];
      const bool is_unbound = row.shared * (1.0 + 4.0 * row.f * (1.0 - row.f) * x) >= row.bound;
      changed = changed || is_unbound != unbound[i];
      unbound[i] = is_unbound;
    }
    if (!changed) break;
  }
  std::vector<const MixedFitPoint*> used;
  for (const Row& row : rows) used.push_back(row.p);
  MixedFitReport rep;
  rep.points = static_cast<int>(used.size());
  rep.interference = x;
  SsdModel fitted = drive;
  fitted.mix_interference = rep.interference;
  int latency_points = 0;
  for (const MixedFitPoint* p : used) {
    const double total = p->read_gbps + p->write_gbps;
    const double f = p->read_gbps / total;
    rep.fit_error_pct +=
        std::abs(fitted.mixed_bandwidth_gbps(p->block_bytes, p->queue_depth, f) - total) / total;
    if (p->read_latency_us > 0) {
      const double predicted_us =
          fitted.mixed_latency_s(p->block_bytes, p->queue_depth, f).read_s * 1e6;
      rep.read_latency_error_pct += std::abs(predicted_us - p->read_latency_us) / p->read_latency_us;
      ++latency_points;
    }
  }
  rep.fit_error_pct *= 100.0 / rep.points;
  if (latency_points > 0) rep.read_latency_error_pct *= 100.0 / latency_points;
  return rep;
}

}  // namespace tiersim::calibrate
