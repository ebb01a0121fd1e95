#include "backends/nccl/nccl_transport.h"

#include <cstring>

#include "backends/nccl/nccl_bootstrap.h"
#include "backends/nccl/nccl_types.h"

namespace hvd::nccl {

static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes, "NCCL_UNIQUE_ID_BYTES changed");

// ---- NcclComm ------------------------------------------------------------------------

Status NcclComm::create(std::shared_ptr<CudaContext> ctx, Transport& group, uint64_t generation,
                        std::shared_ptr<NcclComm>* out) {
  ctx->activate();
  std::shared_ptr<NcclComm> c(new NcclComm(ctx));
  const Status local = cuda_status(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking),
                                   "cudaStreamCreate");
  UniqueIdBytes id{};
  Status s = share_unique_id(
      group, generation, local,
      [](UniqueIdBytes* bytes) {
        ncclUniqueId u;
        Status st = nccl_status(ncclGetUniqueId(&u), "ncclGetUniqueId");
        if (st.ok()) std::memcpy(bytes->data(), u.internal, kUniqueIdBytes);
        return st;
      },
      &id);
  if (!s.ok()) return local.ok() ? s : local;
  ncclUniqueId u;
  std::memcpy(u.internal, id.data(), kUniqueIdBytes);
  ctx->activate();
  const Status init =
      nccl_status(ncclCommInitRank(&c->comm_, group.size(), u, group.rank()), "ncclCommInitRank");
  // Every member learns whether every other member's init worked: all keep it or none.
  s = agree(group, generation, init);
  if (!s.ok()) return init.ok() ? s : init;
  *out = std::move(c);
  return Status::OK();
}

NcclComm::~NcclComm() {
  ctx_->activate();
  if (stream_ && !aborted_) (void)cudaStreamSynchronize(stream_);
  if (comm_) (void)(aborted_ ? ncclCommAbort(comm_) : ncclCommDestroy(comm_));
  if (stream_) (void)cudaStreamDestroy(stream_);
}

Status NcclComm::begin() {
  if (aborted_)
    return Status::Aborted("the NCCL communicator was aborted after an earlier failure");
  ctx_->activate();
  return ctx_->stream_after_device(stream_);
}

Status NcclComm::end(cudaEvent_t* done) {
  Status st;
  cudaEvent_t e = ctx_->acquire_event(&st);
  if (!e) return st;
  st = cuda_status(cudaEventRecord(e, stream_), "cudaEventRecord");
  if (st.ok()) st = ctx_->device_after_stream(stream_);
  if (!st.ok()) {
    ctx_->release_event(e);
    return st;
  }
  *done = e;
  return Status::OK();
}

Status NcclComm::async_error() {
  if (aborted_ || !comm_) return Status::OK();
  ncclResult_t r = ncclSuccess;
  Status s = nccl_status(ncclCommGetAsyncError(comm_, &r), "ncclCommGetAsyncError");
  if (s.ok()) s = nccl_status(r, "NCCL communicator");
  return s;
}

Status NcclComm::wait(cudaEvent_t done, double deadline_s) {
  Status s = wait_event(done, deadline_s, [this] { return async_error(); });
  ctx_->release_event(done);
  if (!s.ok() && !aborted_) {
    // A stuck or failed communicator never recovers: abort it so no later call hangs.
    (void)ncclCommAbort(comm_);
    comm_ = nullptr;
    aborted_ = true;
  }
  return s;
}

// ---- point-to-point requests -----------------------------------------------------------

struct NcclTransport::Batch {
  std::shared_ptr<CudaContext> ctx;
  std::shared_ptr<NcclComm> comm;  // keeps the communicator alive while requests wait
  cudaEvent_t done = nullptr;
  bool launched = false;
  Status status;
  ~Batch() {
    if (done) ctx->release_event(done);
  }
};

class NcclTransport::NcclRequest final : public Request {
 public:
  NcclRequest(NcclTransport* t, std::shared_ptr<Batch> b) : t_(t), b_(std::move(b)) {}
  bool test() override {
    b_->ctx->activate();
    if (!b_->launched) (void)t_->flush_p2p();
    if (!b_->status.ok() || !b_->done) return true;
    return cudaEventQuery(b_->done) != cudaErrorNotReady;
  }
  Status wait(double deadline_s) override {
    b_->ctx->activate();
    if (!b_->launched) (void)t_->flush_p2p();
    if (!b_->status.ok() || !b_->done) return b_->status;
    NcclComm* c = b_->comm.get();
    Status s = wait_event(b_->done, deadline_s, [c] { return c->async_error(); });
    if (!s.ok()) b_->status = s;
    return s;
  }

 private:
  NcclTransport* t_;
  std::shared_ptr<Batch> b_;
};


// ---- NcclTransport -------------------------------------------------------------------

NcclTransport::NcclTransport(Transport* host, std::unique_ptr<Transport> owned,
                             std::shared_ptr<CudaContext> ctx, std::shared_ptr<NcclComm> comm,
                             uint64_t generation, const NcclOptions& opts)
    : host_(host ? host : owned.get()),
      owned_(std::move(owned)),
      ctx_(std::move(ctx)),
      comm_(std::move(comm)),
      generation_(generation),
      opts_(opts),
      native_(*this) {}

// Operations whose requests were dropped unwaited are discarded, not launched: launching
// them now could leave the stream waiting for a peer that has moved on.
NcclTransport::~NcclTransport() {
  pending_.clear();
  if (open_batch_) open_batch_->status = Status::Aborted("the NCCL transport was destroyed");
}

bool NcclTransport::is_device(const void* p) const {
  if (!p) return false;
  ctx_->activate();  // no CUDA call may run without it: it would open a context on GPU 0
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error of an unknown pointer
    return false;
  }
  return memory_space_of(a.type) == MemorySpace::kDevice;
}

double NcclTransport::collective_deadline() const {
  return opts_.collective_timeout_s > 0 ? steady_seconds() + opts_.collective_timeout_s
                                        : kNoDeadline;
}

NcclComm* NcclTransport::comm(Status* st) {
  if (comm_) return comm_.get();
  if (!comm_error_.ok()) {
    *st = comm_error_;
    return nullptr;
  }
  comm_error_ = NcclComm::create(ctx_, *host_, generation_, &comm_);
  if (!comm_error_.ok()) {
    *st = comm_error_;
    return nullptr;
  }
  return comm_.get();
}

namespace {

// 0: all host (or phantom), 1: a single device piece, 2: several pieces, some on the device.
int classify(const NcclTransport& t, IoSpan pieces) {
  bool device = false;
  for (const IoPiece& p : pieces) device = device || (p.bytes && t.is_device(p.data));
  return !device ? 0 : pieces.size() == 1 ? 1 : 2;
}

const char* kScatteredDevice =
    "NCCL transport: a message scattered over several device pieces is not supported "
    "(the GPU Device keeps a fusion buffer; see CudaDevice::scatter_gather)";

}  // namespace

std::unique_ptr<Request> NcclTransport::isendv(int peer, IoSpan pieces, int tag) {
  switch (classify(*this, pieces)) {
    case 0:
      return host_->isendv(peer, pieces, tag);
    case 1:
      return enqueue_p2p(true, peer, pieces[0].data, pieces[0].bytes);
    default:
      return completed_request(Status::InvalidArgument(kScatteredDevice));
  }
}

std::unique_ptr<Request> NcclTransport::irecv_into(int peer, const RecvInto& into, int tag) {
  switch (into.sink ? 0 : classify(*this, into.pieces)) {
    case 0:
      return host_->irecv_into(peer, into, tag);
    case 1:
      return enqueue_p2p(false, peer, into.pieces[0].data, into.pieces[0].bytes);
    default:
      return completed_request(Status::InvalidArgument(kScatteredDevice));
  }
}

std::unique_ptr<Request> NcclTransport::enqueue_p2p(bool send, int peer, void* data, size_t bytes) {
  if (peer < 0 || peer >= size())
    return completed_request(
        Status::InvalidArgument("NCCL transfer to rank " + std::to_string(peer) +
                                " outside the group of " + std::to_string(size())));
  if (!open_batch_) {
    open_batch_ = std::make_shared<Batch>();
    open_batch_->ctx = ctx_;
  }
  pending_.push_back(P2pOp{send, peer, data, bytes});
  return std::make_unique<NcclRequest>(this, open_batch_);
}

Status NcclTransport::flush_p2p() {
  if (pending_.empty()) return Status::OK();
  std::vector<P2pOp> ops = std::move(pending_);
  pending_.clear();
  std::shared_ptr<Batch> batch = std::move(open_batch_);
  batch->launched = true;
  Status st;
  NcclComm* c = comm(&st);
  if (c) st = c->begin();
  if (st.ok()) {
    st = nccl_status(ncclGroupStart(), "ncclGroupStart");
    for (const P2pOp& op : ops) {
      if (!st.ok()) break;
      st = op.send
               ? nccl_status(ncclSend(op.data, op.bytes, ncclUint8, op.peer, c->get(), c->stream()),
                             "ncclSend")
               : nccl_status(ncclRecv(op.data, op.bytes, ncclUint8, op.peer, c->get(), c->stream()),
                             "ncclRecv");
    }
    const Status end = nccl_status(ncclGroupEnd(), "ncclGroupEnd");
    if (st.ok()) st = end;
  }
  if (st.ok()) st = c->end(&batch->done);
  batch->comm = comm_;
  batch->status = st;
  return st;
}

std::unique_ptr<Transport> NcclTransport::split(int color, int key) {
  (void)flush_p2p();
  std::unique_ptr<Transport> sub = host_->split(color, key);
  const uint64_t gen = child_generation(generation_, splits_++, color);
  if (!sub) return nullptr;
  // The communicator is created at the sub-group's first device transfer (collectively:
  // every member reaches it in the same collective), so groups that only ever carry host
  // traffic or are never used (e.g. unused hierarchical splits) cost no NCCL resources.
  return std::make_unique<NcclTransport>(nullptr, std::move(sub), ctx_, nullptr, gen, opts_);
}

}  // namespace hvd::nccl
