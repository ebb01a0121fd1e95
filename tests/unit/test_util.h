// Helpers for multi-rank tests over the in-process backend: typed test data, a serial
// reference that shares no code with the runtime, and ranks on threads for tests that
// build each rank's runtime themselves.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "backends/local/half.h"
#include "hvd/config.h"
#include "hvd/local.h"
#include "hvd/seams.h"
#include "hvd/types.h"

namespace hvd::test {

/// An in-process world of `size` ranks, one thread per rank running body(seams) with the
/// rank's host seams (what run_local gives a rank; the rank is seams.transport->rank()),
/// for tests that build the runtime themselves with run_rank or start_runtime: a log
/// stream or knobs of their own per rank, a fake GPU, a runtime that is only started.
/// Ranks `running` and up get their transport (held, silent, until every thread is done)
/// but no thread: ranks that died before starting. Returns when every thread has.
inline void on_local_ranks(int size, const std::function<void(OwnedSeams&)>& body, int running = -1) {
  LocalWorld world(size);
  if (running < 0 || running > size) running = size;
  std::vector<std::unique_ptr<Transport>> dead;
  for (int r = running; r < size; ++r) dead.push_back(world.transport(r));
  std::vector<std::thread> threads;
  for (int r = 0; r < running; ++r)
    threads.emplace_back([&, r] {
      OwnedSeams seams = host_seams(world.transport(r));
      body(seams);
    });
  for (auto& t : threads) t.join();
}

/// Knobs for fast tests: short cycles, small segments so pipelining paths run.
inline Config fast_config() {
  Config c;
  c.cycle_time_ms = 0.2;
  c.pipeline_chunk = 16 << 10;
  c.rhd_threshold = 0;
  return c;
}

/// Small integer-valued data so every reduction is exact in every dtype.
inline double test_value(int rank, int64_t i, ReduceOp op, DataType dt) {
  if (op == ReduceOp::kProduct) return (rank + i) % 3 == 0 ? 2.0 : 1.0;
  const bool is_unsigned = dt == DataType::kUInt8;
  const double v = static_cast<double>((rank * 7 + i * 3) % 9);
  return is_unsigned ? v : v - 4.0;
}

/// Writes `v` as element i of a buffer of type dt.
inline void store(std::vector<uint8_t>& buf, int64_t i, DataType dt, double v) {
  uint8_t* p = buf.data() + i * static_cast<int64_t>(dtype_size(dt));
  switch (dt) {
    case DataType::kUInt8: *p = static_cast<uint8_t>(v); break;
    case DataType::kInt8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case DataType::kInt32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DataType::kInt64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case DataType::kFloat32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case DataType::kFloat64: std::memcpy(p, &v, 8); break;
    case DataType::kFloat16: { uint16_t x = float_to_half(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case DataType::kBFloat16: { uint16_t x = float_to_bf16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
  }
}

/// Reads element i of a buffer of type dt as double.
inline double load(const uint8_t* base, int64_t i, DataType dt) {
  const uint8_t* p = base + i * static_cast<int64_t>(dtype_size(dt));
  switch (dt) {
    case DataType::kUInt8: return *p;
    case DataType::kInt8: { int8_t x; std::memcpy(&x, p, 1); return x; }
    case DataType::kInt32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case DataType::kInt64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DataType::kFloat32: { float x; std::memcpy(&x, p, 4); return x; }
    case DataType::kFloat64: { double x; std::memcpy(&x, p, 8); return x; }
    case DataType::kFloat16: { uint16_t x; std::memcpy(&x, p, 2); return half_to_float(x); }
    case DataType::kBFloat16: { uint16_t x; std::memcpy(&x, p, 2); return bf16_to_float(x); }
  }
  return 0;
}

/// Serial reference of allreduce element i over `size` ranks.
inline double reference(int size, int64_t i, ReduceOp op, DataType dt) {
  double acc = test_value(0, i, op, dt);
  for (int r = 1; r < size; ++r) {
    const double v = test_value(r, i, op, dt);
    switch (op) {
      case ReduceOp::kAverage:
      case ReduceOp::kSum: acc += v; break;
      case ReduceOp::kProduct: acc *= v; break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
      case ReduceOp::kMax: acc = std::max(acc, v); break;
      case ReduceOp::kAdasum: break;  // not element-wise: adasum_test.cc has its reference
    }
  }
  if (op == ReduceOp::kAverage) {
    acc /= size;
    const bool integral = dt == DataType::kUInt8 || dt == DataType::kInt8 ||
                          dt == DataType::kInt32 || dt == DataType::kInt64;
    if (integral) acc = std::round(acc);
  }
  return acc;
}

/// Allowed error for element values of magnitude ~|v| in dtype dt (average only rounds).
inline double tolerance(DataType dt, ReduceOp op, double v) {
  if (op != ReduceOp::kAverage) return 0;
  switch (dt) {
    case DataType::kFloat16: return std::abs(v) * 1e-3 + 1e-3;
    case DataType::kBFloat16: return std::abs(v) * 8e-3 + 8e-3;
    case DataType::kFloat32: return std::abs(v) * 1e-6 + 1e-7;
    case DataType::kFloat64: return 1e-12;
    default: return 0;
  }
}

inline const std::vector<DataType>& all_dtypes() {
  static const std::vector<DataType> v = {DataType::kUInt8,   DataType::kInt8,    DataType::kInt32,
                                          DataType::kInt64,   DataType::kFloat16, DataType::kBFloat16,
                                          DataType::kFloat32, DataType::kFloat64};
  return v;
}

inline const std::vector<ReduceOp>& all_ops() {
  static const std::vector<ReduceOp> v = {ReduceOp::kAverage, ReduceOp::kSum, ReduceOp::kMin,
                                          ReduceOp::kMax, ReduceOp::kProduct};
  return v;
}

}  // namespace hvd::test
