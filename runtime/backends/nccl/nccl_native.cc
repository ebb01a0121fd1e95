// NCCL's collectives as the runtime's native algorithms. Uneven allgather is a group of
// ncclBroadcast (one per root), uneven reduce-scatter a group of ncclReduce, alltoall a
// group of ncclSend/ncclRecv; the hierarchical allreduce is NCCL inside the node and NCCL
// or the host transport (MPI) across nodes.
#include <cstring>

#include "backends/nccl/cuda_kernels.h"
#include "backends/nccl/nccl_transport.h"
#include "backends/nccl/nccl_types.h"

namespace hvd::nccl {
namespace {

int cached_nccl_version() {
  static const int v = nccl_version();
  return v;
}

std::vector<size_t> prefix_offsets(const std::vector<size_t>& v) {
  std::vector<size_t> off(v.size() + 1, 0);
  for (size_t i = 0; i < v.size(); ++i) off[i + 1] = off[i] + v[i];
  return off;
}

template <class T>
bool all_equal(const std::vector<T>& v) {
  for (const T& x : v)
    if (x != v.front()) return false;
  return true;
}

char* at(void* p, size_t bytes) {
  return static_cast<char*>(p) + bytes;
}
const char* at(const void* p, size_t bytes) {
  return static_cast<const char*>(p) + bytes;
}

// Runs NCCL calls between ncclGroupStart and ncclGroupEnd (End is always called).
template <class F>
ncclResult_t grouped(F&& calls) {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  const ncclResult_t body = calls();
  const ncclResult_t end = ncclGroupEnd();
  return body != ncclSuccess ? body : end;
}

}  // namespace

NcclNative::~NcclNative() {
  if (staging_) (void)cudaFreeHost(staging_);
  if (barrier_word_) (void)cudaFree(barrier_word_);
}

NativeCollectives* NcclNative::host() const {
  return t_.host().native();
}

template <class F>
Status NcclNative::run(const char* what, F&& enqueue) {
  HVD_RETURN_IF_ERROR(t_.flush_p2p());
  Status st;
  NcclComm* c = t_.comm(&st);
  if (!c) return st;
  st = c->begin();
  if (st.ok()) st = nccl_status(enqueue(c->get(), c->stream()), what);
  cudaEvent_t done = nullptr;
  if (st.ok()) st = c->end(&done);
  if (!st.ok()) return st;
  if (t_.options().synchronous || t_.options().collective_timeout_s > 0)
    return c->wait(done, t_.collective_deadline());
  c->context().release_event(done);  // re-recording later is harmless; ordering is by stream
  return c->async_error();
}

Status NcclNative::postscale(void* buf, int64_t count, DataType dt, double factor) {
  Status s;
  NcclComm* c = t_.comm(&s);
  if (!c || count <= 0) return s;
  CudaContext& ctx = c->context();
  ctx.activate();
  s = cuda_status(launch_scale(buf, count, dt, factor, ctx.stream()), "scale kernel");
  if (s.ok() && ctx.options().synchronous) s = ctx.synchronize();
  return s;
}

Status NcclNative::allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) {
  if (!t_.is_device(buf)) {
    if (NativeCollectives* h = host()) return h->allreduce(buf, count, dt, op);
    return Status::InvalidArgument(
        "NCCL allreduce: host buffer and the host transport has no native collectives");
  }
  if (count <= 0) return Status::OK();
  if (t_.options().hierarchical_allreduce) return hierarchical_allreduce(buf, count, dt, op);
  return flat_allreduce(buf, count, dt, op);
}

Status NcclNative::flat_allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) {
  ncclDataType_t ty;
  NcclReduction red;
  Status s = to_nccl_type(dt, &ty);
  if (s.ok()) s = to_nccl_reduction(op, dt, t_.size(), cached_nccl_version(), &red);
  if (s.ok())
    s = run("ncclAllReduce", [&](ncclComm_t c, cudaStream_t st) {
      return ncclAllReduce(buf, buf, static_cast<size_t>(count), ty, red.op, c, st);
    });
  if (s.ok() && red.postscale != 1.0) s = postscale(buf, count, dt, red.postscale);
  return s;
}

Status NcclNative::hierarchical_allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) {
  if (!hier_checked_) {  // the same decision on every rank: all split, or none
    hier_checked_ = true;
    std::vector<int> nodes;
    for (int r = 0; r < t_.size(); ++r) nodes.push_back(t_.node_of(r));
    const HierarchyLayout h = plan_hierarchy(nodes, t_.rank());
    if (h.enabled) {
      local_ = t_.split(h.local.color, h.local.key);
      cross_ = t_.split(h.cross.color, h.cross.key);
    }
  }
  if (!local_ || !cross_) return flat_allreduce(buf, count, dt, op);
  auto& L = static_cast<NcclTransport&>(*local_);
  auto& C = static_cast<NcclTransport&>(*cross_);
  auto& ln = static_cast<NcclNative&>(*L.native());
  auto& cn = static_cast<NcclNative&>(*C.native());
  ncclDataType_t ty;
  NcclReduction red;
  Status s = to_nccl_type(dt, &ty);
  if (s.ok()) s = to_nccl_reduction(op, dt, t_.size(), cached_nccl_version(), &red);
  if (!s.ok()) return s;
  // Equal node sizes: an average of node averages is the global average.
  const ReduceOp step_op = red.op == ncclSum && op == ReduceOp::kAverage ? ReduceOp::kSum : op;
  const size_t es = dtype_size(dt);
  const int lr = L.rank();
  const int64_t chunk = count / L.size(), ndiv = chunk * L.size(), rem = count - ndiv;
  char* mine = at(buf, static_cast<size_t>(lr * chunk) * es);
  char* tail = at(buf, static_cast<size_t>(ndiv) * es);
  // 1. inside the node: reduce-scatter the divisible part, reduce the tail to local rank 0.
  s = ln.run("ncclReduceScatter", [&](ncclComm_t c, cudaStream_t st) {
    return grouped([&] {
      ncclResult_t r = ncclSuccess;
      if (chunk) r = ncclReduceScatter(buf, mine, static_cast<size_t>(chunk), ty, red.op, c, st);
      if (r == ncclSuccess && rem)
        r = ncclReduce(tail, tail, static_cast<size_t>(rem), ty, red.op, 0, c, st);
      return r;
    });
  });
  // 2. across nodes, among ranks with the same local rank.
  auto cross = [&](void* p, int64_t n) {
    return t_.options().cross_node_over_host ? cn.cross_over_host(p, n, dt, step_op)
                                             : cn.flat_allreduce(p, n, dt, step_op);
  };
  if (s.ok() && chunk) s = cross(mine, chunk);
  if (s.ok() && rem && lr == 0) s = cross(tail, rem);
  // 3. inside the node: allgather the slices, broadcast the tail.
  if (s.ok())
    s = ln.run("ncclAllGather", [&](ncclComm_t c, cudaStream_t st) {
      return grouped([&] {
        ncclResult_t r = ncclSuccess;
        if (chunk) r = ncclAllGather(mine, buf, static_cast<size_t>(chunk), ty, c, st);
        if (r == ncclSuccess && rem)
          r = ncclBroadcast(tail, tail, static_cast<size_t>(rem), ty, 0, c, st);
        return r;
      });
    });
  if (s.ok() && red.postscale != 1.0) s = postscale(buf, count, dt, red.postscale);
  return s;
}

Status NcclNative::cross_over_host(void* buf, int64_t count, DataType dt, ReduceOp op) {
  NativeCollectives* h = host();
  if (!h)
    return Status::InvalidArgument(
        "hierarchical allreduce over the host: the host transport has no native collectives");
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dt);
  Status s;
  NcclComm* c = t_.comm(&s);  // only for the shared context; no NCCL call is made on it
  if (!c) return s;
  CudaContext& ctx = c->context();
  ctx.activate();
  if (staging_bytes_ < bytes) {
    if (staging_) (void)cudaFreeHost(staging_);
    staging_ = nullptr;
    staging_bytes_ = 0;
    s = cuda_status(cudaMallocHost(&staging_, round_device_allocation(bytes)), "cudaMallocHost");
    if (!s.ok()) return s;
    staging_bytes_ = round_device_allocation(bytes);
  }
  s = ctx.flush();
  if (s.ok())
    s = cuda_status(cudaMemcpyAsync(staging_, buf, bytes, cudaMemcpyDeviceToHost, ctx.stream()),
                    "cudaMemcpyAsync");
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(ctx.stream()), "cudaStreamSynchronize");
  const ReduceOp host_op = op == ReduceOp::kAverage ? ReduceOp::kSum : op;
  if (s.ok()) s = h->allreduce(staging_, count, dt, host_op);
  if (s.ok())
    s = cuda_status(cudaMemcpyAsync(buf, staging_, bytes, cudaMemcpyHostToDevice, ctx.stream()),
                    "cudaMemcpyAsync");
  if (s.ok() && op == ReduceOp::kAverage)
    s = cuda_status(launch_scale(buf, count, dt, 1.0 / t_.size(), ctx.stream()), "scale kernel");
  // The staging buffer is reused by the next call: the copy back must have finished.
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(ctx.stream()), "cudaStreamSynchronize");
  return s;
}

Status NcclNative::allgatherv(const void* in, void* out, const std::vector<size_t>& bytes) {
  if (!t_.is_device(out)) {
    if (NativeCollectives* h = host()) return h->allgatherv(in, out, bytes);
    return Status::InvalidArgument(
        "NCCL allgather: host buffer and the host transport has no native collectives");
  }
  const int me = t_.rank();
  const std::vector<size_t> off = prefix_offsets(bytes);
  if (off.back() == 0) return Status::OK();
  if (all_equal(bytes)) {  // in place when `in` already is this rank's block of `out`
    return run("ncclAllGather", [&](ncclComm_t c, cudaStream_t st) {
      return ncclAllGather(in ? in : at(out, off[static_cast<size_t>(me)]), out, bytes[0],
                           ncclUint8, c, st);
    });
  }
  return run("ncclBroadcast (allgatherv)", [&](ncclComm_t c, cudaStream_t st) {
    return grouped([&] {
      for (size_t r = 0; r < bytes.size(); ++r) {
        if (!bytes[r]) continue;
        const void* src = static_cast<int>(r) == me && in ? in : at(out, off[r]);
        ncclResult_t e =
            ncclBroadcast(src, at(out, off[r]), bytes[r], ncclUint8, static_cast<int>(r), c, st);
        if (e != ncclSuccess) return e;
      }
      return ncclSuccess;
    });
  });
}

Status NcclNative::broadcast(void* buf, size_t bytes, int root) {
  if (!t_.is_device(buf)) {
    if (NativeCollectives* h = host()) return h->broadcast(buf, bytes, root);
    return Status::InvalidArgument(
        "NCCL broadcast: host buffer and the host transport has no native collectives");
  }
  if (bytes == 0) return Status::OK();
  return run("ncclBroadcast", [&](ncclComm_t c, cudaStream_t st) {
    return ncclBroadcast(buf, buf, bytes, ncclUint8, root, c, st);
  });
}

Status NcclNative::alltoallv(const void* in, const std::vector<size_t>& sb, void* out,
                             const std::vector<size_t>& rb) {
  if (!t_.is_device(in) && !t_.is_device(out)) {
    if (NativeCollectives* h = host()) return h->alltoallv(in, sb, out, rb);
    return Status::InvalidArgument(
        "NCCL alltoall: host buffers and the host transport has no native collectives");
  }
  const int me = t_.rank();
  const std::vector<size_t> so = prefix_offsets(sb), ro = prefix_offsets(rb);
  return run("ncclSend/ncclRecv (alltoall)", [&](ncclComm_t c, cudaStream_t st) {
    const size_t self = static_cast<size_t>(me);
    if (sb[self] && cudaMemcpyAsync(at(out, ro[self]), at(in, so[self]), sb[self],
                                    cudaMemcpyDeviceToDevice, st) != cudaSuccess)
      return ncclUnhandledCudaError;
    return grouped([&] {
      for (size_t r = 0; r < sb.size(); ++r) {
        if (r == self) continue;
        ncclResult_t e = ncclSuccess;
        if (sb[r]) e = ncclSend(at(in, so[r]), sb[r], ncclUint8, static_cast<int>(r), c, st);
        if (e == ncclSuccess && rb[r])
          e = ncclRecv(at(out, ro[r]), rb[r], ncclUint8, static_cast<int>(r), c, st);
        if (e != ncclSuccess) return e;
      }
      return ncclSuccess;
    });
  });
}

Status NcclNative::reducescatter(const void* in, void* out, const std::vector<int64_t>& counts,
                                 DataType dt, ReduceOp op) {
  if (!t_.is_device(in)) {
    if (NativeCollectives* h = host()) return h->reducescatter(in, out, counts, dt, op);
    return Status::InvalidArgument(
        "NCCL reducescatter: host buffer and the host transport has no native collectives");
  }
  ncclDataType_t ty;
  NcclReduction red;
  Status s = to_nccl_type(dt, &ty);
  if (s.ok()) s = to_nccl_reduction(op, dt, t_.size(), cached_nccl_version(), &red);
  if (!s.ok()) return s;
  const size_t es = dtype_size(dt);
  const int me = t_.rank();
  if (all_equal(counts)) {
    if (counts.front() == 0) return Status::OK();
    s = run("ncclReduceScatter", [&](ncclComm_t c, cudaStream_t st) {
      return ncclReduceScatter(in, out, static_cast<size_t>(counts[0]), ty, red.op, c, st);
    });
  } else {
    s = run("ncclReduce (reducescatter)", [&](ncclComm_t c, cudaStream_t st) {
      return grouped([&] {
        size_t off = 0;
        for (size_t r = 0; r < counts.size(); ++r) {
          const size_t n = static_cast<size_t>(counts[r]);
          if (n) {
            void* dst = static_cast<int>(r) == me ? out : const_cast<char*>(at(in, off * es));
            ncclResult_t e =
                ncclReduce(at(in, off * es), dst, n, ty, red.op, static_cast<int>(r), c, st);
            if (e != ncclSuccess) return e;
          }
          off += n;
        }
        return ncclSuccess;
      });
    });
  }
  const int64_t mine = counts[static_cast<size_t>(me)];
  if (s.ok() && red.postscale != 1.0) s = postscale(out, mine, dt, red.postscale);
  return s;
}

Status NcclNative::barrier() {
  Status s;
  NcclComm* c = t_.comm(&s);
  if (!c) return s;
  c->context().activate();
  if (!barrier_word_) {
    s = cuda_status(cudaMalloc(&barrier_word_, sizeof(int32_t)), "cudaMalloc");
    if (s.ok()) s = cuda_status(cudaMemset(barrier_word_, 0, sizeof(int32_t)), "cudaMemset");
    if (!s.ok()) return s;
  }
  s = run("ncclAllReduce (barrier)", [&](ncclComm_t comm, cudaStream_t st) {
    return ncclAllReduce(barrier_word_, barrier_word_, 1, ncclInt32, ncclSum, comm, st);
  });
  if (s.ok()) s = c->context().synchronize();  // a barrier returns only once everyone arrived
  return s;
}

}  // namespace hvd::nccl
