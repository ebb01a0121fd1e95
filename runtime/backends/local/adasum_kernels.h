// Adasum's two host kernels (collectives/adasum.h): the dot product and squared norms of
// two ranges, and their scaled sum. float16, float32 and float64; accumulation and the
// combination are in double, half values are widened and rounded once.
#pragma once

#include <cstdint>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd {

/// out = {dot(a, b), |a|², |b|²} over `count` elements of dt (float16/32/64).
Status dot_norms_host(const void* a, const void* b, int64_t count, DataType dt, double out[3]);
/// a[i] = ca * a[i] + cb * b[i] over `count` elements of dt (float16/32/64).
Status scaled_add_host(void* a, double ca, const void* b, double cb, int64_t count, DataType dt);

}  // namespace hvd
