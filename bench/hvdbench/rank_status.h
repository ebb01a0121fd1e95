// Exit codes of an mpirun job that mpirun itself loses: under `--enable-recovery` Open MPI's
// mpirun exits 0 whatever its ranks return (a failed training job looked like a success).
// hvdrun runs each rank through itself (`hvdrun --rank-status-dir DIR CMD...`): the rank's
// hvdrun runs CMD as a child, writes its exit status to DIR/rank.<N> and exits with it; the
// launching hvdrun then returns mpirun's code, or, when that is 0, the first rank's non-zero
// code (1 for a rank that left no status: its wrapper was killed too).
#pragma once

#include <string>
#include <vector>

namespace hvd::bench {

/// In a rank (OMPI_COMM_WORLD_RANK set): runs `cmd`, records its exit status in
/// `dir`/rank.<rank> and returns it (128 + signal for a killed command). Signals hvdrun gets
/// (mpirun's SIGTERM on abort, SIGINT) are passed on to the command.
int run_rank_recording_status(const std::string& dir, const std::vector<std::string>& cmd);

/// Launching side: runs `mpirun_cmd` (its ranks started as above with `dir`), waits, and
/// returns the job's exit code as the header says. `np` ranks are expected in `dir`, which
/// is removed afterwards.
int run_mpirun_with_statuses(const std::vector<std::string>& mpirun_cmd, const std::string& dir, int np);

}  // namespace hvd::bench
