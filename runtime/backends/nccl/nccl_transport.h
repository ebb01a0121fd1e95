// NCCL Transport: a group of ranks with an NCCL communicator (own CUDA stream) beside the
// host Transport it was made from. Transfers of device memory go over NCCL, transfers of
// host memory (the control plane, alltoall counts) over the host transport, so one object
// serves as the runtime's world. isend/irecv of device memory are queued and launched as
// one ncclGroupStart/End at the first test()/wait() (a send and a receive to the same
// peer must be in one group or two ranks deadlock); a Request is then a CUDA event.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/nccl/cuda_context.h"
#include "hvd/nccl.h"
#include "hvd/transport.h"

namespace hvd::nccl {

/// One NCCL communicator and the stream its operations run on.
class NcclComm {
 public:
  /// Collective over `group`: bootstraps the unique id and calls ncclCommInitRank.
  static Status create(std::shared_ptr<CudaContext> ctx, Transport& group, uint64_t generation,
                       std::shared_ptr<NcclComm>* out);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  /// The communicator.
  ncclComm_t get() const { return comm_; }
  /// The stream its operations are enqueued on.
  cudaStream_t stream() const { return stream_; }
  /// Activates the GPU and orders the stream after the device stream's queued work.
  Status begin();
  /// Records completion on the stream into *done (pool event) and orders the device
  /// stream after it.
  Status end(cudaEvent_t* done);
  /// NCCL's asynchronous error state (a peer died, a network error); OK while healthy.
  Status async_error();
  /// Waits for `done` until `deadline_s`, aborting the communicator on an async error or
  /// time-out (the comm is unusable afterwards); releases the event.
  Status wait(cudaEvent_t done, double deadline_s);
  /// The shared CUDA state.
  CudaContext& context() const { return *ctx_; }

 private:
  explicit NcclComm(std::shared_ptr<CudaContext> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<CudaContext> ctx_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool aborted_ = false;
};

class NcclTransport;

/// ncclAllReduce & co. over an NcclTransport's communicator; host buffers are passed to
/// the host transport's native collectives.
class NcclNative final : public NativeCollectives {
 public:
  explicit NcclNative(NcclTransport& t) : t_(t) {}
  ~NcclNative() override;
  std::string prefix() const override { return "NCCL"; }
  bool supports(DataType) const override { return true; }
  bool preferred(DeviceKind device) const override { return device == DeviceKind::kGPU; }
  Status allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) override;
  Status allgatherv(const void* in, void* out, const std::vector<size_t>& bytes) override;
  Status broadcast(void* buf, size_t bytes, int root) override;
  Status alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                   const std::vector<size_t>& recv_bytes) override;
  Status reducescatter(const void* in, void* out, const std::vector<int64_t>& counts, DataType dt,
                       ReduceOp op) override;
  Status barrier() override;

 private:
  /// Runs `enqueue(comm, stream)` (NCCL calls) between begin() and end(), then waits if
  /// the options ask for it.
  template <class F>
  Status run(const char* what, F&& enqueue);
  Status flat_allreduce(void* buf, int64_t count, DataType dt, ReduceOp op);
  Status hierarchical_allreduce(void* buf, int64_t count, DataType dt, ReduceOp op);
  Status cross_over_host(void* buf, int64_t count, DataType dt, ReduceOp op);
  /// buf *= factor on the device stream (average as ncclSum + scale).
  Status postscale(void* buf, int64_t count, DataType dt, double factor);
  NativeCollectives* host() const;

  NcclTransport& t_;
  std::unique_ptr<Transport> local_, cross_;  ///< lazily split for the hierarchical path
  bool hier_checked_ = false;
  void* staging_ = nullptr;  ///< pinned host memory for cross_over_host
  size_t staging_bytes_ = 0;
  void* barrier_word_ = nullptr;  ///< device scratch for barrier()
};

/// Transport over NCCL (device memory) plus a host Transport (host memory).
class NcclTransport final : public Transport {
 public:
  /// Wraps `host` (borrowed, or owned when `owned` is set) with communicator `comm`
  /// (null: created at first use, collectively; `error` non-OK: unusable, every device
  /// transfer fails with it).
  NcclTransport(Transport* host, std::unique_ptr<Transport> owned, std::shared_ptr<CudaContext> ctx,
                std::shared_ptr<NcclComm> comm, uint64_t generation, const NcclOptions& opts);
  ~NcclTransport() override;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  int node_of(int r) const override { return host_->node_of(r); }
  /// Host pieces: the host transport's isendv (MPI sends them without packing). Device
  /// pieces: one piece is an ncclSend; several fail (CudaDevice keeps the fusion buffer,
  /// scatter_gather() is false, so the runtime never asks).
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override;
  /// Counterpart of isendv. A receive of any size (RecvInto::sink) goes to the host
  /// transport: NCCL needs the size on both sides.
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override;
  std::unique_ptr<Transport> split(int color, int key) override;
  NativeCollectives* native() override { return &native_; }
  std::string name() const override { return "nccl"; }

  /// The host transport underneath.
  Transport& host() const { return *host_; }
  /// The communicator, created now if it was deferred; null with *st set on failure.
  NcclComm* comm(Status* st);
  /// Launches queued point-to-point operations as one NCCL group.
  Status flush_p2p();
  /// True when `p` is device (or managed) memory; null and host memory are false.
  bool is_device(const void* p) const;
  /// The options the world was made with.
  const NcclOptions& options() const { return opts_; }
  /// Deadline for a native collective that starts now.
  double collective_deadline() const;

 private:
  struct P2pOp {
    bool send;
    int peer;
    void* data;
    size_t bytes;
  };
  struct Batch;
  class NcclRequest;
  std::unique_ptr<Request> enqueue_p2p(bool send, int peer, void* data, size_t bytes);

  Transport* host_;
  std::unique_ptr<Transport> owned_;
  std::shared_ptr<CudaContext> ctx_;
  std::shared_ptr<NcclComm> comm_;
  Status comm_error_;
  uint64_t generation_;
  uint64_t splits_ = 0;
  NcclOptions opts_;
  std::vector<P2pOp> pending_;
  std::shared_ptr<Batch> open_batch_;
  NcclNative native_;
};

}  // namespace hvd::nccl
