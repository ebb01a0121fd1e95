// Element-wise kernels on host memory: dst = dst (op) src, scaling, identity fill.
// Written as plain loops over __restrict pointers so the compiler vectorises them;
// half types are widened to float, combined, and rounded once.
#pragma once

#include <cstdint>

#include "hvd/types.h"

namespace hvd {

/// dst[i] = dst[i] (op) src[i] for i < count (op is not kAverage).
void reduce_host(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op);
/// dst[i] = a[i] (op) b[i]; dst may be a (not b).
void reduce_host_into(void* dst, const void* a, const void* b, int64_t count, DataType dt,
                      ReduceOp op);
/// buf[i] = buf[i] * factor (integers: rounded to nearest).
void scale_host(void* buf, int64_t count, DataType dt, double factor);
/// buf[i] = identity of op (0, 1, +max or lowest).
void fill_identity_host(void* buf, int64_t count, DataType dt, ReduceOp op);

}  // namespace hvd
