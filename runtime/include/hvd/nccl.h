// The NCCL/CUDA backend: a Transport whose device-memory transfers and native collectives
// run on NCCL communicators (one per process set, bootstrapped over the host transport),
// and a GPU Device (cudaMalloc, batched copies, CUDA kernels for reduce/scale/fill).
// Built when CMake finds CUDA, NCCL and MPI (HVD_HAVE_NCCL); link hvd::nccl.
//
//   hvd::OwnedSeams seams = hvd::host_seams(hvd::make_mpi_world_transport());
//   seams.host = std::move(seams.transport);  // the NCCL world is built over it
//   hvd::Status s = hvd::make_nccl_world(*seams.host, local_rank % gpus, &seams.transport,
//                                        &seams.gpu);
//   // hvd::start_runtime(RuntimeOptions{seams.view(), config}, &rt), and
//   // HVD_ALLREDUCE_ALGORITHM=native etc. to use NCCL's collectives.
#pragma once

#include <memory>
#include <string>

#include "hvd/device.h"
#include "hvd/status.h"
#include "hvd/transport.h"
#include "hvd/types.h"

namespace hvd {

/// Knobs of make_nccl_world.
struct NcclOptions {
  /// Each Device call and native collective waits for the GPU before returning. The
  /// executor synchronises the device once per response before completing its handles, so
  /// this is a second guard (a failing kernel is named at its own call); it costs copy
  /// batching and overlap. See docs/nccl.md.
  bool synchronous = true;
  /// Native allreduce on a homogeneous multi-node group runs hierarchically: NCCL
  /// reduce-scatter inside the node, allreduce across nodes, NCCL allgather inside.
  bool hierarchical_allreduce = false;
  /// The cross-node step of the hierarchical allreduce goes through host memory over the
  /// host transport's native (MPI) allreduce instead of a cross-node NCCL communicator.
  bool cross_node_over_host = false;
  /// > 0: a native collective not finished after this many seconds fails with kTimeout.
  double collective_timeout_s = 0;
};

/// True when the CUDA runtime sees at least one GPU; otherwise false and, if `why` is not
/// null, the reason ("no CUDA driver ...", "no CUDA-capable device ...").
bool cuda_available(std::string* why = nullptr);

/// Builds the NCCL world over `host_world` (typically make_mpi_world_transport(); any
/// Transport works, it only carries the bootstrap and host-memory messages). Collective:
/// every rank of `host_world` calls it. Uses GPU `device_id` on this rank. On success,
/// *out is the world Transport (host memory still travels over `host_world`, which must
/// outlive it) and *gpu the GPU Device. Fails with kPrecondition and a clear message when
/// no GPU is usable, and with kInternal when CUDA or NCCL set-up fails (then every rank
/// fails: the root forwards its error instead of leaving peers waiting).
Status make_nccl_world(Transport& host_world, int device_id, std::unique_ptr<Transport>* out,
                       std::unique_ptr<Device>* gpu, const NcclOptions& options = {});

/// Number of GPUs the CUDA runtime sees (0 when none or no driver).
int cuda_device_count();

/// Host <-> device copy for callers that hold no CUDA headers (benchmarks, tests): done
/// (the data is in place) when it returns. Pageable host memory is fine.
Status copy_host_device(void* dst, const void* src, size_t bytes);

/// "NCCL 2.28.9, CUDA runtime 13.0" (versions this build runs with).
std::string nccl_version_string();

}  // namespace hvd
