// One rank's runtime for hvdbench: the platform, the CPU device, the transport (the MPI
// world or a one-rank in-process world), a per-rank timeline and the started Runtime.
#pragma once

#include <memory>
#include <string>

#include "hvd/local.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"
#include "hvd/timeline.h"

namespace hvd::bench {

/// Where a RankRuntime's transport comes from.
enum class WorldKind { kMpi, kLocalSingle };

/// Where the benchmark's tensors live.
enum class MemoryKind {
  kHost,  ///< host memory; the transport above (MPI or in-process)
  kGpu,   ///< GPU memory; the NCCL backend over the transport above (make_gpu_world)
};

/// A started runtime and everything it borrows.
class RankRuntime {
 public:
  ~RankRuntime();
  /// Builds and starts a runtime with `config`; `origin` is platform time of timeline ts 0
  /// (0: the runtime agrees on one). With MemoryKind::kGpu the world is the NCCL backend
  /// and device() the GPU. When the failure is one every rank reports alike (no GPU, NCCL
  /// set-up: the backend agrees before failing), *agreed is set to true, so callers can
  /// exit cleanly without aborting the MPI job.
  static Status start(WorldKind kind, const Config& config, double origin,
                      std::unique_ptr<RankRuntime>* out, MemoryKind memory = MemoryKind::kHost,
                      bool* agreed = nullptr);
  /// Shuts the runtime down (collective) and flushes the timeline.
  Status shutdown();
  /// The runtime.
  Runtime& runtime() { return *runtime_; }
  /// The platform (for replay compute).
  Platform& platform() { return *seams_.platform; }
  /// The timeline (null when none was asked for).
  TimelineWriter* timeline() { return timeline_.get(); }
  /// Platform time of timeline ts 0.
  double origin() const { return origin_; }
  /// The world transport the runtime runs on (the NCCL world with kGpu).
  Transport& transport() { return *seams_.transport; }
  /// Where tensors of this benchmark live: the CPU device, or the GPU with kGpu.
  Device& device() { return seams_.gpu ? *seams_.gpu : *seams_.cpu; }
  /// DeviceKind of the benchmark's tensors.
  DeviceKind device_kind() const { return seams_.gpu ? DeviceKind::kGPU : DeviceKind::kCPU; }

 private:
  OwnedSeams seams_;  // with kGpu: the NCCL world over the host transport, and the GPU
  std::unique_ptr<TimelineWriter> timeline_;
  std::unique_ptr<Runtime> runtime_;
  double origin_ = 0;
};


/// Reads the HVD_*/HOROVOD_* knobs; on a bad value prints one line and returns false.
bool knobs_from_env(Config* cfg);

}  // namespace hvd::bench
