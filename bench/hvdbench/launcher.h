// How hvdbench gets its ranks: in this process (-np 1), from an outer mpirun (the world
// it finds), or by exec'ing Open MPI's mpirun on itself (-np N, -H, --hostfile).
#pragma once

#include <string>
#include <vector>

#include "options.h"

namespace hvd::bench {

/// hvdrun's exit code when CMD cannot be run (not found, not executable), as a shell's.
inline constexpr int kExitCannotRun = 127;

/// Where the ranks come from.
enum class LaunchMode {
  kInProcess,    ///< one rank, this process, no mpirun
  kMpiWorld,     ///< this process is one rank of an MPI job (outer or our own mpirun)
  kSelfLaunch,   ///< exec mpirun to start the ranks, each re-running this command
};

/// Decides from the options and the environment (OMPI_COMM_WORLD_SIZE, the marker).
LaunchMode decide_launch(const Options& o);
/// World size of the surrounding MPI job, or 0 when not under mpirun.
int mpi_world_size_from_env();
/// Online CPU cores of this host.
int host_cores();
/// The mpirun command line that starts `o.np` copies of `self` with `args`.
std::vector<std::string> mpirun_command(const Options& o, const std::string& self,
                                        const std::vector<std::string>& args, bool as_root,
                                        int cores);
/// "" when -H (o.hosts) is host[:slots],... with slots >= 1, at least o.np slots in all, and
/// every host name resolves; else one line naming -H and the problem (mpirun would print 19
/// lines of ssh and ORTE text, or its banner, and exit 255). --hostfile (o.hostfile) the
/// same way: at least one host, slots=N >= 1, -np within the slots where every line gives
/// them, names that resolve.
std::string check_hosts(const Options& o);
/// "" when `cmd` (a path, or a name looked up on PATH as execvp does) is an executable file
/// here; else "cannot run 'cmd': <why>" (the exit code for it is kExitCannotRun).
std::string check_command(const std::string& cmd);
/// Sets the knob variables (and the collective-mode cycle-time default) in this process,
/// so ranks started from it, and runtimes built in it, read them.
void export_knob_env(const Options& o);
/// Replaces this process by mpirun; returns only on failure (exit code 1, message printed).
int exec_mpirun(const Options& o, int argc, const char* const* argv);
/// Replaces this process by `cmd` (looked up on PATH; HVDBENCH_SHOW_LAUNCH=1 prints it);
/// returns only on failure: exit code 1, "<tool>: cannot run 'cmd[0]' <why>: <errno text>".
int exec_command(const std::vector<std::string>& cmd, const std::string& tool, const std::string& why);

}  // namespace hvd::bench
