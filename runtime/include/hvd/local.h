// The in-process backend: ranks are threads of one process, messages are memcpy's.
// Used by fast unit tests and by examples; also the reference the simulator is checked
// against.
#pragma once

#include <functional>
#include <memory>

#include "hvd/runtime.h"
#include "hvd/transport.h"

namespace hvd {

class LocalFabric;

/// A world of `size` in-process ranks; hands out one Transport per rank.
class LocalWorld {
 public:
  /// `ranks_per_node` consecutive ranks share a node (0: all on one node).
  explicit LocalWorld(int size, int ranks_per_node = 0);
  ~LocalWorld();
  /// The world transport of `rank` (call once per rank).
  std::unique_ptr<Transport> transport(int rank);
  /// Number of ranks.
  int size() const { return size_; }

 private:
  int size_;
  std::shared_ptr<LocalFabric> fabric_;
};

/// The world transport of a world of one in-process rank (the facade built without MPI,
/// hvdbench's single-rank runs).
std::unique_ptr<Transport> make_single_rank_transport();

/// Runs `body(runtime)` on `size` threads, each with its own started Runtime over a
/// LocalWorld, then shuts every runtime down. Returns the first failed start/shutdown.
/// (backends/local/run_local.cc: the only place threads are started for ranks.)
Status run_local(int size, const Config& config, const std::function<void(Runtime&)>& body,
                 int ranks_per_node = 0, TimelineWriter* timeline = nullptr);

}  // namespace hvd
