// Running simulations in child processes: SimGrid allows one engine per process, so each
// simulation of a sweep runs in a fork()ed child that sends its result back on a pipe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hvd/status.h"

namespace hvd::sim {

/// One job for run_isolated_many(): produces a result string (or a failed Status).
using IsolatedJob = std::function<Status(std::string* result)>;

/// Runs `job` in a forked child and returns its result (a crash becomes kInternal).
Status run_isolated(const IsolatedJob& job, std::string* result);

/// Runs `jobs` in forked children, at most `parallel` at a time; results[i] and the
/// returned statuses are in job order. `on_done(i)` is called (in the parent) as each ends.
std::vector<Status> run_isolated_many(const std::vector<IsolatedJob>& jobs, int parallel,
                                      std::vector<std::string>* results,
                                      const std::function<void(size_t)>& on_done = {});

}  // namespace hvd::sim
