// hvdsim --elastic-reset: what one elastic reset costs on the scenario's cluster (hvdrun's
// elastic mode, docs/python.md "Elastic training"): a worker of np is lost, the survivors
// notice, meet again through the rendezvous as np - 1 ranks, receive the state by broadcast
// from rank 0, and redo the steps since the last commit.
#pragma once

#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// What the command line says of the reset.
struct ResetArgs {
  int np = 0;                  ///< ranks before the loss; 0: the largest of sweep.np
  double optimizer_slots = -1;  ///< optimizer tensors per parameter; < 0: workload.optimizer's (SGD 0, momentum 1, Adam 2)
  int commit_every = 1;        ///< steps between state.commit() calls
  double detect_s = 0.05;      ///< from the loss to the survivors' restore (measured: 0.03-0.08 s)
};

/// Prints, per model of the scenario, the parts of one reset and their sum. Exit code.
int run_elastic_reset(const Scenario& sc, const ResetArgs& a);

}  // namespace hvd::sim
