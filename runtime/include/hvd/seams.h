// The seams of one rank, bundled: what every world (in-process threads, MPI, NCCL, the
// simulator) builds once per rank and hands to the one way of building that rank's
// runtime (RuntimeOptions{seams, config, ...}: hvd/runtime.h).
#pragma once

#include <memory>

#include "hvd/device.h"
#include "hvd/platform.h"
#include "hvd/transport.h"

namespace hvd {

/// One rank's seams (borrowed: they must outlive the runtime built from them).
struct Seams {
  Platform* platform = nullptr;    ///< time and concurrency
  Transport* transport = nullptr;  ///< the world group of this rank
  Device* cpu = nullptr;           ///< host tensors
  Device* gpu = nullptr;           ///< device tensors (optional)
};

/// Seams that own their parts: what a rank of a real process holds (members are destroyed
/// bottom-up: the transport before the host transport it may be layered over).
struct OwnedSeams {
  std::unique_ptr<Platform> platform;
  std::unique_ptr<Device> cpu;
  std::unique_ptr<Device> gpu;        ///< optional
  std::unique_ptr<Transport> host;    ///< what `transport` is built over (NCCL over MPI), or null
  std::unique_ptr<Transport> transport;
  /// The borrowed view a runtime is built from.
  Seams view() const { return {platform.get(), transport.get(), cpu.get(), gpu.get()}; }
};

/// A rank of a real process over `transport`: make_std_platform(), make_cpu_device(), no
/// GPU (backends/local).
OwnedSeams host_seams(std::unique_ptr<Transport> transport);

}  // namespace hvd
