// Collective mode's NCCL baseline (--device gpu): ncclAllReduce called directly on the
// NCCL world's communicator and the buffers hvd just used.
#include "collective_parts.h"
#include "gpu_world.h"

namespace hvd::bench {
namespace {

bool floating(DataType dt) {
  return dt == DataType::kFloat16 || dt == DataType::kBFloat16 || dt == DataType::kFloat32 ||
         dt == DataType::kFloat64;
}

}  // namespace

// The peer of --device gpu: ncclAllReduce called directly on the NCCL world's communicator
// and the buffers hvd just used, timed as nccl-tests does (back to back, one stream
// synchronisation); the slowest rank's mean. Then, with --check, the result of the last call.
Status measure_nccl(const Options& o, const Case& c, RankRuntime& rr, Operands& mem,
                    Measurement* m) {
  Status s;
  if (o.check) s = mem.fill(c);
  if (s.ok() && o.check) s = mem.clear_output();
  if (!s.ok()) return s;
  double sec = 0;
  HVD_RETURN_IF_ERROR(time_nccl_allreduce(rr.transport(), mem.in(), mem.out(), c.count, c.dt, c.rop,
                                          o.warmup_iters, o.iters, &sec));
  m->us = sec * 1e6;
  HVD_RETURN_IF_ERROR(max_over_ranks(rr.runtime(), &m->us));
  m->ran = true;
  if (o.check) {
    // Integer averages: NCCL has no ncclAvg for them; the direct call sums.
    const ReduceOp check_op =
        c.rop == ReduceOp::kAverage && !floating(c.dt) ? ReduceOp::kSum : c.rop;
    int64_t wrong = 0;
    HVD_RETURN_IF_ERROR(mem.count_wrong_at(c, mem.out(), static_cast<size_t>(c.bytes()), check_op, &wrong));
    s = sum_over_ranks(rr.runtime(), "hvdbench.nccl_wrong", &wrong);
    m->wrong = wrong;
  }
  return s;
}

}  // namespace hvd::bench
