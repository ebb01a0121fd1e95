// Collective mode, in the style of nccl-tests: for each size, the hvd runtime (full API,
// negotiation included), the raw MPI collective, and a ring-neighbour MPI_Sendrecv
// exchange; time, algbw, busbw and #wrong per line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hvd/types.h"
#include "options.h"

namespace hvd::bench {

/// Elements per rank buffer for `op` at `bytes` on `np` ranks (whole multiples of np for
/// allgather/alltoall/reducescatter, as nccl-tests does); 0 when `bytes` holds less than
/// one element (one block of np), where nccl-tests prints size 0 too.
int64_t collective_count(const std::string& op, int64_t bytes, size_t elem_size, int np);

/// Test data: the value rank `r` puts at index `i` of its input.
double input_value(const std::string& op, ReduceOp rop, int r, int64_t i, int np, int64_t count);
/// The value index `i` of rank `me`'s result should hold (`count`: input elements per rank).
double expected_value(const std::string& op, ReduceOp rop, int me, int64_t i, int np,
                      int64_t count);
/// Writes `v` as element `i` of a `dt` buffer / reads it back as double.
void set_element(void* buf, DataType dt, int64_t i, double v);
double get_element(const void* buf, DataType dt, int64_t i);
/// True when `got` is close enough to `want` for `dt` (averages may round).
bool matches(double got, double want, DataType dt, ReduceOp rop);

/// Runs collective mode on this rank of an MPI job; returns the exit code.
int run_collective_mode(const Options& o);

}  // namespace hvd::bench
