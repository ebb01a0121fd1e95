#include "backends/nccl/nccl_types.h"

namespace hvd::nccl {

int nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return NCCL_VERSION_CODE;
  return v;
}

bool has_nccl_avg(int version) {
  return version >= 21000;
}  // 2.10.0 in the 2.9+ encoding

bool is_floating(DataType dt) {
  return dt == DataType::kFloat16 || dt == DataType::kBFloat16 || dt == DataType::kFloat32 ||
         dt == DataType::kFloat64;
}

Status to_nccl_type(DataType dt, ncclDataType_t* out) {
  switch (dt) {
    case DataType::kUInt8:
      *out = ncclUint8;
      return Status::OK();
    case DataType::kInt8:
      *out = ncclInt8;
      return Status::OK();
    case DataType::kInt32:
      *out = ncclInt32;
      return Status::OK();
    case DataType::kInt64:
      *out = ncclInt64;
      return Status::OK();
    case DataType::kFloat16:
      *out = ncclFloat16;
      return Status::OK();
    case DataType::kFloat32:
      *out = ncclFloat32;
      return Status::OK();
    case DataType::kFloat64:
      *out = ncclFloat64;
      return Status::OK();
    case DataType::kBFloat16:
#if NCCL_VERSION_CODE >= 21000
      *out = ncclBfloat16;
      return Status::OK();
#else
      break;
#endif
  }
  return Status::InvalidArgument("NCCL has no element type " + std::string(dtype_name(dt)));
}

Status to_nccl_reduction(ReduceOp op, DataType dt, int group_size, int version,
                         NcclReduction* out) {
  if (group_size < 1) return Status::InvalidArgument("NCCL reduction over an empty group");
  NcclReduction r;
  switch (op) {
    case ReduceOp::kSum:
      r.op = ncclSum;
      break;
    case ReduceOp::kProduct:
      r.op = ncclProd;
      break;
    case ReduceOp::kMin:
      r.op = ncclMin;
      break;
    case ReduceOp::kMax:
      r.op = ncclMax;
      break;
    case ReduceOp::kAverage:
#if NCCL_VERSION_CODE >= 21000
      if (is_floating(dt) && has_nccl_avg(version)) {
        r.op = ncclAvg;
        break;
      }
#endif
      r.op = ncclSum;
      r.postscale = 1.0 / group_size;
      break;
    case ReduceOp::kAdasum:  // not element-wise: the runtime's own algorithm, on the CPU
      return Status::InvalidArgument("NCCL has no Adasum reduction");
  }
  *out = r;
  return Status::OK();
}

MemorySpace memory_space_of(cudaMemoryType type) {
  return (type == cudaMemoryTypeDevice || type == cudaMemoryTypeManaged) ? MemorySpace::kDevice
                                                                         : MemorySpace::kHost;
}

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::Internal(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                          cudaGetErrorString(e) + ")");
}

Status nccl_status(ncclResult_t r, const char* what) {
  if (r == ncclSuccess || r == ncclInProgress) return Status::OK();
  std::string m = std::string(what) + " failed: " + ncclGetErrorString(r);
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) m += std::string(" (") + last + ")";
  return Status::Internal(m);
}

}  // namespace hvd::nccl
