#include "backends/mpi/mpi_native.h"

#include <climits>

namespace hvd {

namespace {

bool mpi_type(DataType dt, MPI_Datatype* out) {
  switch (dt) {
    case DataType::kUInt8: *out = MPI_UINT8_T; return true;
    case DataType::kInt8: *out = MPI_INT8_T; return true;
    case DataType::kInt32: *out = MPI_INT32_T; return true;
    case DataType::kInt64: *out = MPI_INT64_T; return true;
    case DataType::kFloat32: *out = MPI_FLOAT; return true;
    case DataType::kFloat64: *out = MPI_DOUBLE; return true;
    default: return false;  // half types: MPI has no built-in reduction for them
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kProduct: return MPI_PROD;
    default: return MPI_SUM;
  }
}

Status check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return Status::OK();
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return Status::Internal(std::string(what) + " failed: " + std::string(msg, static_cast<size_t>(len)));
}

bool to_ints(const std::vector<size_t>& v, std::vector<int>* counts, std::vector<int>* displs) {
  size_t off = 0;
  for (size_t x : v) {
    if (x > INT_MAX || off > INT_MAX) return false;
    counts->push_back(static_cast<int>(x));
    displs->push_back(static_cast<int>(off));
    off += x;
  }
  return true;
}

}  // namespace

Status MpiNative::allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) {
  MPI_Datatype t;
  if (!mpi_type(dt, &t)) return Status::InvalidArgument("MPI_Allreduce has no " + std::string(dtype_name(dt)));
  if (count > INT_MAX) return Status::InvalidArgument("MPI_Allreduce count exceeds INT_MAX");
  // MPI_MIN / MPI_MAX keep or drop a NaN by operand order (implementation-defined): declined,
  // so that the runtime's own kernels propagate it (as torch.minimum / torch.maximum do).
  if ((op == ReduceOp::kMin || op == ReduceOp::kMax) && (dt == DataType::kFloat32 || dt == DataType::kFloat64))
    return Status::InvalidArgument("MPI_Allreduce: Min/Max of floats run on the runtime's kernels (NaN propagates)");
  return check(MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(count), t, mpi_op(op), comm_), "MPI_Allreduce");
}

Status MpiNative::allgatherv(const void* in, void* out, const std::vector<size_t>& bytes) {
  std::vector<int> counts, displs;
  if (!to_ints(bytes, &counts, &displs)) return Status::InvalidArgument("MPI_Allgatherv: buffer exceeds INT_MAX bytes");
  int me;
  MPI_Comm_rank(comm_, &me);
  (void)in;  // our block is already in place in `out`
  return check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, out, counts.data(), displs.data(), MPI_BYTE, comm_),
               "MPI_Allgatherv");
}

Status MpiNative::broadcast(void* buf, size_t bytes, int root) {
  if (bytes > INT_MAX) return Status::InvalidArgument("MPI_Bcast: buffer exceeds INT_MAX bytes");
  return check(MPI_Bcast(buf, static_cast<int>(bytes), MPI_BYTE, root, comm_), "MPI_Bcast");
}

Status MpiNative::alltoallv(const void* in, const std::vector<size_t>& sb, void* out,
                            const std::vector<size_t>& rb) {
  std::vector<int> sc, sd, rc, rd;
  if (!to_ints(sb, &sc, &sd) || !to_ints(rb, &rc, &rd))
    return Status::InvalidArgument("MPI_Alltoallv: buffer exceeds INT_MAX bytes");
  return check(MPI_Alltoallv(in, sc.data(), sd.data(), MPI_BYTE, out, rc.data(), rd.data(), MPI_BYTE, comm_),
               "MPI_Alltoallv");
}

Status MpiNative::reducescatter(const void* in, void* out, const std::vector<int64_t>& counts,
                                DataType dt, ReduceOp op) {
  MPI_Datatype t;
  if (!mpi_type(dt, &t)) return Status::InvalidArgument("MPI_Reduce_scatter has no " + std::string(dtype_name(dt)));
  std::vector<int> c;
  for (int64_t x : counts) {
    if (x > INT_MAX) return Status::InvalidArgument("MPI_Reduce_scatter count exceeds INT_MAX");
    c.push_back(static_cast<int>(x));
  }
  return check(MPI_Reduce_scatter(in, out, c.data(), t, mpi_op(op), comm_), "MPI_Reduce_scatter");
}

Status MpiNative::barrier() { return check(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace hvd
