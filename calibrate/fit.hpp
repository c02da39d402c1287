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

// One mixed point (`--rwmix-read`): each direction's bandwidth over the same interval and the
// reads' mean completion latency.
struct MixedFitPoint {
  double block_bytes = 0;
  double queue_depth = 0;    // requests in flight, reads and writes together
  double read_gbps = 0;
  double write_gbps = 0;
  double read_latency_us = 0;  // mean; 0 = not measured
};

struct MixedFitReport {
  double interference = 0;   // SsdModel::mix_interference
  int points = 0;            // mixed points with both directions present
  double fit_error_pct = 0;  // mean |predicted - measured| / measured of the total bandwidth
  double read_latency_error_pct = 0;  // the same for the reads' mean latency (mixed_latency_s)
};

// Fits the interference x of model/ssd_model.hpp mixed_seconds_per_byte to mixed points, given the
// pure read and write models fitted on the same drive (`drive`; its mix_interference is ignored).
// At a point with read fraction f (by bytes, as measured), the pure models give the shared time
// t_s = f t_read + (1 - f) t_write per byte; the model adds x 4 f (1 - f) t_s, linear in x, so x
// is the least-squares solution in relative error (rows divided by the measured time, as the
// direction fit), over the points where the model is not held at its full-duplex bound (there x
// changes nothing; which points those are depends on x, so the fit repeats until they settle).
// x below -1 (negative shared time) is clamped to -1. Points with only one direction carry no
// information on x and are left out. Throws ModelError when no point has both.
MixedFitReport fit_mix_interference(const SsdModel& drive, const std::vector<MixedFitPoint>& points);

}  // namespace tiersim::calibrate
