#pragma once
// Fitting the device model of model/ssd_model.hpp to measured points.
//
// t(B, Q) = c0 + c1/B + c2/(Q*B) + c3/Q is linear in c = (1/peak, io_overhead, latency, 1/stream),
// so the fit is least squares on rows (1, 1/B, 1/(QB), 1/Q) -> 1/bandwidth. Each row is divided by
// its measured time, which minimises relative rather than absolute error (small blocks have times
// per byte thousands of times larger than big ones and would otherwise decide the fit alone).
// Coefficients must be non-negative: with four unknowns the exact non-negative least-squares
// solution is the best of the 2^4 subset fits whose coefficients all come out non-negative.
#include <vector>

#include "model/ssd_model.hpp"

namespace tiersim::calibrate {

struct FitPoint {
  double block_bytes = 0;
  double queue_depth = 0;    // requests in flight against the device (threads x per-thread depth)
  double bandwidth_gbps = 0;
};

// Throws ModelError with fewer than 4 usable points or when no fit with a positive peak exists.
SsdDirectionModel fit_direction(const std::vector<FitPoint>& points);

// Mean of |predicted - measured| / measured over the points, in percent.
double mean_abs_error_pct(const SsdDirectionModel& model, const std::vector<FitPoint>& points);

struct FitReport {
  SsdDirectionModel model;   // fitted on the training points only
  int fit_points = 0;
  int heldout_points = 0;
  double fit_error_pct = 0;       // on the training points
  double heldout_error_pct = 0;   // on the held-out points: the honest prediction error
};

// Holds out every `heldout_every`-th point (indices k-1, 2k-1, ...; 0 = none), fits the rest and
// reports both errors.
FitReport fit_with_holdout(const std::vector<FitPoint>& points, int heldout_every);

}  // namespace tiersim::calibrate
