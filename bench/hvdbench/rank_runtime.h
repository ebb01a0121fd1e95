// One rank's runtime for hvdbench: the platform, the CPU device, the transport (the MPI
// world or a one-rank in-process world), a per-rank timeline and the started Runtime.
#pragma once

#include <memory>
#include <string>

#include "hvd/local.h"
#include "hvd/runtime.h"
#include "hvd/timeline.h"

namespace hvd::bench {

/// Where a RankRuntime's transport comes from.
enum class WorldKind { kMpi, kLocalSingle };

/// A started runtime and everything it borrows.
class RankRuntime {
 public:
  ~RankRuntime();
  /// Builds and starts a runtime with `config`; `origin` is platform time of timeline ts 0
  /// (0: the runtime agrees on one).
  static Status start(WorldKind kind, const Config& config, double origin,
                      std::unique_ptr<RankRuntime>* out);
  /// Shuts the runtime down (collective) and flushes the timeline.
  Status shutdown();
  /// The runtime.
  Runtime& runtime() { return *runtime_; }
  /// The platform (for replay compute).
  Platform& platform() { return *platform_; }
  /// The timeline (null when none was asked for).
  TimelineWriter* timeline() { return timeline_.get(); }
  /// Platform time of timeline ts 0.
  double origin() const { return origin_; }

 private:
  std::unique_ptr<Platform> platform_;
  std::unique_ptr<Device> cpu_;
  std::unique_ptr<LocalWorld> local_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<TimelineWriter> timeline_;
  std::unique_ptr<Runtime> runtime_;
  double origin_ = 0;
};


/// Reads the HVD_*/HOROVOD_* knobs; on a bad value prints one line and returns false.
bool knobs_from_env(Config* cfg);

}  // namespace hvd::bench
