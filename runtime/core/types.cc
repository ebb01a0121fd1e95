#include "hvd/types.h"

#include <array>
#include <sstream>

#include "core/op_table.h"
#include "hvd/status.h"

namespace hvd {
namespace {
constexpr std::array<std::string_view, 8> kDtypeNames = {
    "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
constexpr std::array<size_t, 8> kDtypeSizes = {1, 1, 4, 8, 2, 2, 4, 8};
constexpr std::array<std::string_view, 6> kOpNames = {"average", "sum", "min", "max", "product", "adasum"};
}  // namespace

size_t dtype_size(DataType t) { return kDtypeSizes[static_cast<size_t>(t)]; }
std::string_view dtype_name(DataType t) { return kDtypeNames[static_cast<size_t>(t)]; }

std::optional<DataType> parse_dtype(std::string_view name) {
  for (size_t i = 0; i < kDtypeNames.size(); ++i)
    if (kDtypeNames[i] == name) return static_cast<DataType>(i);
  if (name == "float" || name == "fp32") return DataType::kFloat32;
  if (name == "half" || name == "fp16") return DataType::kFloat16;
  if (name == "double" || name == "fp64") return DataType::kFloat64;
  if (name == "bf16") return DataType::kBFloat16;
  return std::nullopt;
}

std::string_view op_name(ReduceOp op) { return kOpNames[static_cast<size_t>(op)]; }

std::optional<ReduceOp> parse_op(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == name) return static_cast<ReduceOp>(i);
  if (name == "avg") return ReduceOp::kAverage;
  if (name == "prod") return ReduceOp::kProduct;
  return std::nullopt;
}

std::string_view optype_name(OpType t) { return op_row(t).name; }

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

std::string Status::to_string() const {
  static constexpr std::array<std::string_view, 7> kNames = {
      "OK", "InvalidArgument", "Mismatch", "Precondition", "Aborted", "Timeout", "Internal"};
  if (ok()) return "OK";
  return std::string(kNames[static_cast<size_t>(code())]) + ": " + message();
}

}  // namespace hvd
