// The seams of a rank in a real process: the std platform and the CPU device around the
// world transport the caller built (in-process, MPI; NCCL layers over it later).
#include "hvd/seams.h"

namespace hvd {

OwnedSeams host_seams(std::unique_ptr<Transport> transport) {
  OwnedSeams s;
  s.platform = make_std_platform();
  s.cpu = make_cpu_device();
  s.transport = std::move(transport);
  return s;
}

}  // namespace hvd
