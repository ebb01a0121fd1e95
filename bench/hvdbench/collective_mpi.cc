// Collective mode's MPI baseline: the raw MPI collective of each size and a ring-neighbour
// MPI_Sendrecv exchange (one ring step: the ring's physical limit), on a duplicate of
// MPI_COMM_WORLD.
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "collective_parts.h"
#ifdef HVD_HAVE_MPI
#include <mpi.h>
#endif

namespace hvd::bench {

const char* MpiBaseline::name(const std::string& op) {
  if (op == "allreduce") return "MPI_Allreduce";
  if (op == "allgather") return "MPI_Allgather";
  if (op == "broadcast") return "MPI_Bcast";
  if (op == "alltoall") return "MPI_Alltoall";
  return "MPI_Reduce_scatter_block";
}

#ifdef HVD_HAVE_MPI

namespace {

MPI_Datatype mpi_type(DataType dt) {
  switch (dt) {
    case DataType::kUInt8: return MPI_UINT8_T;
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;  // no MPI type for float16/bfloat16
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kProduct: return MPI_PROD;
    default: return MPI_SUM;  // average: MPI has none; the baseline times the sum
  }
}

// The raw MPI collective for `c`; false when MPI cannot express it (type, int counts).
bool mpi_supports(const Case& c) {
  if (reduces(c.op) && mpi_type(c.dt) == MPI_DATATYPE_NULL) return false;
  return c.bytes() <= INT_MAX;
}

int mpi_once(const Case& c, MPI_Comm comm, void* in, void* out) {
  const int n = static_cast<int>(c.count);
  const int block = static_cast<int>(c.count / c.np * static_cast<int64_t>(c.es));
  if (c.op == "allreduce") return MPI_Allreduce(in, out, n, mpi_type(c.dt), mpi_op(c.rop), comm);
  if (c.op == "allgather")
    return MPI_Allgather(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
  if (c.op == "broadcast")
    return MPI_Bcast(in, static_cast<int>(c.bytes()), MPI_BYTE, 0, comm);
  if (c.op == "alltoall") return MPI_Alltoall(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
  return MPI_Reduce_scatter_block(in, out, n / c.np, mpi_type(c.dt), mpi_op(c.rop), comm);
}

Status mpi_status(int rc, const char* what) {
  return rc == MPI_SUCCESS ? Status::OK() : Status::Internal(std::string(what) + " failed");
}

}  // namespace

struct MpiBaseline::Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};

// Ends the process when an armed MPI call outlives its deadline: blocking MPI calls cannot
// time out, and a dead peer would keep the survivors in them for ever. Checks 20 times a
// second; arming is two atomic stores, nothing on the timed path's scale.
class MpiBaseline::Watchdog {
 public:
  Watchdog(double give_up_s, std::function<void()> before_exit)
      : give_up_s_(give_up_s), before_exit_(std::move(before_exit)), thread_([this] { loop(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }
  /// Arms for the call `what` until the returned guard goes out of scope.
  auto arm(const char* what) {
    what_.store(what);
    deadline_.store(MPI_Wtime() + give_up_s_);
    auto disarm = [this](void*) { deadline_.store(0); };
    return std::unique_ptr<void, decltype(disarm)>(this, disarm);
  }

 private:
  void loop() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const double d = deadline_.load();
      if (d > 0 && MPI_Wtime() > d) {
        std::fprintf(stderr, "hvdbench: %s (MPI baseline) did not return within %g s, the stall shutdown time: "
                     "a rank may have died or stalled\n", what_.load(), give_up_s_);
        if (before_exit_) before_exit_();
        std::_Exit(kExitRuntimeFailure);
      }
    }
  }
  const double give_up_s_;
  std::function<void()> before_exit_;
  std::atomic<double> deadline_{0};
  std::atomic<const char*> what_{""};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

MpiBaseline::MpiBaseline(double give_up_s, std::function<void()> before_exit) : comm_(std::make_unique<Comm>()) {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm);
  if (give_up_s > 0) watchdog_ = std::make_unique<Watchdog>(give_up_s, std::move(before_exit));
}

MpiBaseline::~MpiBaseline() {
  watchdog_.reset();
  if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

Status MpiBaseline::measure(const Options& o, const Case& c, Measurement* coll, Measurement* xchg) {
  MPI_Comm comm = comm_->comm;
  Buffer in(static_cast<size_t>(c.bytes())), out(static_cast<size_t>(c.bytes()));
  // Every blocking call below runs armed (when a stall shutdown time is set).
  auto armed = [this](const char* what, auto&& call) {
    if (!watchdog_) return call();
    auto guard = watchdog_->arm(what);
    return call();
  };
  auto barrier = [&] { return mpi_status(armed("MPI_Barrier", [&] { return MPI_Barrier(comm); }), "MPI_Barrier"); };
  auto max = [&](double* t) {
    return mpi_status(armed("MPI_Allreduce", [&] { return MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, comm); }),
                      "MPI_Allreduce");
  };
  if (mpi_supports(c)) {
    if (o.check) fill_input(c, in.p);
    auto once = [&] {
      return mpi_status(armed(name(c.op), [&] { return mpi_once(c, comm, in.p, out.p); }), "MPI collective");
    };
    HVD_RETURN_IF_ERROR(time_loop(o, once, barrier, max, &coll->us));
    coll->ran = true;
    if (o.check) {
      fill_input(c, in.p);
      if (c.op != "broadcast") std::memset(out.p, 0, static_cast<size_t>(c.bytes()));
      HVD_RETURN_IF_ERROR(once());
      const ReduceOp check_op = c.rop == ReduceOp::kAverage ? ReduceOp::kSum : c.rop;
      int64_t wrong = count_wrong(c, c.op == "broadcast" ? in.p : out.p, check_op);
      armed("MPI_Allreduce", [&] { return MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, comm); });
      coll->wrong = wrong;
    }
  }
  if (c.np > 1 && c.bytes() <= INT_MAX) {
    const int right = (c.rank + 1) % c.np, left = (c.rank + c.np - 1) % c.np;
    const int n = static_cast<int>(c.bytes());
    auto once = [&] {
      return mpi_status(armed("MPI_Sendrecv", [&] {
                          return MPI_Sendrecv(in.p, n, MPI_BYTE, right, 7, out.p, n, MPI_BYTE, left, 7, comm,
                                              MPI_STATUS_IGNORE);
                        }),
                        "MPI_Sendrecv");
    };
    HVD_RETURN_IF_ERROR(time_loop(o, once, barrier, max, &xchg->us));
    xchg->ran = true;
  }
  return Status::OK();
}

#else  // collective mode refuses to run without MPI (collective_mode.cc)

struct MpiBaseline::Comm {};
class MpiBaseline::Watchdog {};
MpiBaseline::MpiBaseline(double, std::function<void()>) {}
MpiBaseline::~MpiBaseline() = default;
Status MpiBaseline::measure(const Options&, const Case&, Measurement*, Measurement*) {
  return Status::Precondition("hvdbench was built without MPI");
}

#endif

}  // namespace hvd::bench
