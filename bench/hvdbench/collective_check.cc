// Collective mode's test data and the check of results: small integers, so sums are exact
// in every type (even int8, float16), and each rank knows what every element should be.
#include <cmath>

#include "backends/local/half.h"
#include "collective_parts.h"

namespace hvd::bench {

int64_t collective_count(const std::string& op, int64_t bytes, size_t elem_size, int np) {
  // As nccl-tests' getCollByteCount: whole elements, whole blocks of np for the gather-like
  // collectives, and 0 (an empty collective, still timed) when the size holds less.
  int64_t c = bytes / static_cast<int64_t>(elem_size);
  if (op == "allgather" || op == "alltoall" || op == "reducescatter") c -= c % np;
  return c;
}

// Reductions: small integers, so sums are exact in every type (even int8, float16).
double input_value(const std::string& op, ReduceOp rop, int r, int64_t i, int np, int64_t count) {
  const int64_t k = std::max<int64_t>(1, count / np);
  if (op == "allgather") return static_cast<double>((r * 7 + i) % 11);
  if (op == "broadcast") return r == 0 ? static_cast<double>(i % 13 + 1) : 0.0;
  if (op == "alltoall") return static_cast<double>((r * 5 + (i / k) * 3 + i % k) % 17);
  switch (rop) {
    case ReduceOp::kProduct: return i % np == r ? 2.0 : 1.0;
    case ReduceOp::kMin:
    case ReduceOp::kMax: return static_cast<double>((r + i) % 3 + 1);
    default: return static_cast<double>((r + i) % 3);
  }
}

double expected_value(const std::string& op, ReduceOp rop, int me, int64_t i, int np,
                      int64_t count) {
  const int64_t k = std::max<int64_t>(1, count / np);
  if (op == "allgather") return static_cast<double>(((i / k) * 7 + i % k) % 11);
  if (op == "broadcast") return static_cast<double>(i % 13 + 1);
  if (op == "alltoall") return static_cast<double>(((i / k) * 5 + me * 3 + i % k) % 17);
  const int64_t g = op == "reducescatter" ? me * k + i : i;  // index into the full input
  switch (rop) {
    case ReduceOp::kProduct: return 2.0;
    case ReduceOp::kMin:
    case ReduceOp::kMax: {  // values repeat with period 3 in r
      double best = rop == ReduceOp::kMin ? 1e9 : -1e9;
      for (int r = 0; r < std::min(np, 3); ++r) {
        const double v = static_cast<double>((r + g) % 3 + 1);
        best = rop == ReduceOp::kMin ? std::min(best, v) : std::max(best, v);
      }
      return best;
    }
    default: {  // every 3 consecutive ranks contribute 0 + 1 + 2
      double sum = 3.0 * (np / 3);
      for (int r = 0; r < np % 3; ++r) sum += static_cast<double>((r + g) % 3);
      return rop == ReduceOp::kAverage ? sum / np : sum;
    }
  }
}

void set_element(void* buf, DataType dt, int64_t i, double v) {
  switch (dt) {
    case DataType::kUInt8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case DataType::kInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case DataType::kInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case DataType::kInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case DataType::kFloat16:
      static_cast<uint16_t*>(buf)[i] = float_to_half(static_cast<float>(v));
      break;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DataType::kFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: static_cast<double*>(buf)[i] = v; break;
  }
}

double get_element(const void* buf, DataType dt, int64_t i) {
  switch (dt) {
    case DataType::kUInt8: return static_cast<const uint8_t*>(buf)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(buf)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(buf)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case DataType::kFloat16: return half_to_float(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kBFloat16: return bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kFloat32: return static_cast<const float*>(buf)[i];
    case DataType::kFloat64: return static_cast<const double*>(buf)[i];
  }
  return 0;
}

bool matches(double got, double want, DataType dt, ReduceOp rop) {
  const bool integer = dt == DataType::kUInt8 || dt == DataType::kInt8 ||
                       dt == DataType::kInt32 || dt == DataType::kInt64;
  if (integer) return std::fabs(got - want) <= (rop == ReduceOp::kAverage ? 1.0 : 0.0);
  const double rel = (dt == DataType::kFloat16 || dt == DataType::kBFloat16) ? 1e-2
                     : dt == DataType::kFloat32                              ? 1e-5
                                                                             : 1e-12;
  return std::fabs(got - want) <= rel * std::fabs(want) + rel;
}

void fill_input(const Case& c, void* in) {
  const int64_t n = c.in_count();
  for (int64_t i = 0; i < n; ++i)
    set_element(in, c.dt, i, input_value(c.op, c.rop, c.rank, i, c.np, c.count));
}

int64_t count_wrong(const Case& c, const void* out, ReduceOp rop) {
  int64_t wrong = 0;
  const int64_t n = c.out_count();
  for (int64_t i = 0; i < n; ++i)
    if (!matches(get_element(out, c.dt, i), expected_value(c.op, rop, c.rank, i, c.np, c.count),
                 c.dt, rop))
      ++wrong;
  return wrong;
}

bool reduces(const std::string& op) { return op == "allreduce" || op == "reducescatter"; }

}  // namespace hvd::bench
