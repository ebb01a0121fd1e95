// Model mode: training-step replay of a model on every rank, the 1-rank baseline, the
// cross-rank reduction (the slowest rank counts), the table and the report.
#pragma once

#include <vector>

#include "hvd/replay/training_step.h"
#include "hvd/report/report.h"
#include "hvd/workloads/model_trace.h"
#include "hvd/workloads/step_plan.h"
#include "options.h"

namespace hvd::bench {

/// The step plan the options ask for (GPU scale x --compute-scale, batch); error: bad input.
workloads::Result<workloads::StepPlan> plan_for(const workloads::ModelTrace& trace,
                                                const Options& o);

/// Per-rank replay results gathered on every rank: samples[rank][step].
struct WorldSamples {
  std::vector<std::vector<replay::StepSample>> samples;  ///< per rank, per measured step
  std::vector<double> allreduce_time_s;                  ///< per rank, per step
};

/// Builds the report record of one run from every rank's samples (per step, the slowest
/// rank's step counts; its split is reported).
report::RunRecord summarise_run(const Options& o, const workloads::ModelTrace& trace,
                                const workloads::StepPlan& plan, const WorldSamples& world,
                                const replay::ReplayResult& mine, double single_rate);

/// Runs model mode on this rank (`mpi`: rank of an MPI job; else one in-process rank).
/// Returns the process exit code.
int run_model_mode(const Options& o, bool mpi);

}  // namespace hvd::bench
