// MPI's own collectives as the runtime's "native" algorithms (HVD_*_ALGORITHM=native).
#pragma once

#include <mpi.h>

#include "hvd/transport.h"

namespace hvd {

/// NativeCollectives over one MPI communicator.
class MpiNative final : public NativeCollectives {
 public:
  explicit MpiNative(MPI_Comm comm) : comm_(comm) {}
  std::string prefix() const override { return "MPI"; }
  Status allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) override;
  Status allgatherv(const void* in, void* out, const std::vector<size_t>& bytes) override;
  Status broadcast(void* buf, size_t bytes, int root) override;
  Status alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                   const std::vector<size_t>& recv_bytes) override;
  Status reducescatter(const void* in, void* out, const std::vector<int64_t>& counts,
                       DataType dt, ReduceOp op) override;
  Status barrier() override;

 private:
  MPI_Comm comm_;
};

}  // namespace hvd
