// hvdbench --calibrate FILE: measures this machine (or cluster) for the simulator's model
// and writes a calibration JSON (docs/formats.md, "Calibration") that a scenario names
// with "calibration": "FILE".
#pragma once

#include <cstdint>
#include <vector>

#include "options.h"

namespace hvd::bench {

/// One measured point of a link class: time of one message of `bytes` bytes.
struct LinkSample {
  int64_t bytes = 0;   ///< message size
  double seconds = 0;  ///< one-way time (ping-pong: round trip / 2; exchange: per exchange)
};

/// Messages of at least this size set the bandwidth of a fit.
inline constexpr int64_t kBandwidthFrom = int64_t{1} << 20;
/// Messages of at least this size set the peak effective bandwidth (smaller ones are
/// latency-bound).
inline constexpr int64_t kFactorsFrom = int64_t{32} << 10;
/// Messages of at least this size get a bandwidth factor: between the latency-bound sizes
/// and 32 KiB an exchange costs more than alpha + n / peak (MPI's eager copies, and on an
/// oversubscribed host the wait for the peer's core), and the factor carries that.
inline constexpr int64_t kSmallFactorsFrom = 512;

/// Fits t = alpha + bytes / beta: alpha is the smallest message's time, beta the bytes of
/// the messages >= kBandwidthFrom over their time beyond alpha. False when degenerate.
bool fit_alpha_beta(const std::vector<LinkSample>& samples, double* alpha, double* beta);
/// Least squares of t = alpha + bytes / beta minimising the relative error (every size
/// counts alike; recorded for reference). False when degenerate.
bool fit_relative(const std::vector<LinkSample>& samples, double* alpha, double* beta);

/// Runs calibration on this rank (all ranks of the MPI world, or one rank); rank 0 writes
/// o.calibrate. Exit code as hvdbench's.
int run_calibrate_mode(const Options& o, bool mpi);

}  // namespace hvd::bench
