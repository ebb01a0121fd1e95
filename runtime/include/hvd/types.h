// Element types, reduction operations and collective kinds shared by every layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hvd {

/// Element type of a tensor.
enum class DataType : uint8_t { kUInt8, kInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64 };

/// Reduction applied by allreduce / reducescatter. kAdasum (allreduce of float16/32/64 CPU
/// tensors over a power-of-two number of ranks) is Adasum's adaptive summation, not an
/// element-wise operation: collectives/adasum.h.
enum class ReduceOp : uint8_t { kAverage, kSum, kMin, kMax, kProduct, kAdasum };

/// The collective a request asks for.
enum class OpType : uint8_t {
  kAllreduce, kAllgather, kBroadcast, kAlltoall, kReducescatter, kBarrier, kJoin, kAddProcessSet,
  kRemoveProcessSet
};

/// Where a tensor lives.
enum class DeviceKind : uint8_t { kCPU, kGPU };

/// Size in bytes of one element of `t`.
size_t dtype_size(DataType t);
/// Lower-case name ("float32").
std::string_view dtype_name(DataType t);
/// Parses a lower-case name; nullopt if unknown.
std::optional<DataType> parse_dtype(std::string_view name);
/// Lower-case name ("sum").
std::string_view op_name(ReduceOp op);
/// Parses "average"/"sum"/"min"/"max"/"product"/"adasum"; nullopt if unknown.
std::optional<ReduceOp> parse_op(std::string_view name);
/// Upper-case collective name as in Horovod's timeline ("ALLREDUCE").
std::string_view optype_name(OpType t);
/// Product of the dimensions (1 for a scalar shape {}).
int64_t num_elements(const std::vector<int64_t>& shape);
/// "[2, 3]".
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace hvd
