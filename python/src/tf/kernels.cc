// hvd.tensorflow's kernels: AsyncOpKernels that enqueue into the runtime of hvd._core
// through the hvd_capi table and return at once; the runtime's completion callback fills
// the outputs it allocated (allgather, alltoall, reducescatter) and calls done(). So a graph
// that issues many collectives at once (a step's gradients) has them all pending in the
// runtime together, where negotiation and fusion batch them; no TensorFlow thread waits.
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "hvd_capi.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"

using tensorflow::AsyncOpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;
using tensorflow::TensorShape;

namespace {

std::atomic<const hvd_capi*> g_capi{nullptr};

absl::Status status_of(int code, const char* msg) {
  const std::string m = msg ? msg : "";
  switch (code) {
    case HVD_CAPI_OK: return absl::OkStatus();
    case HVD_CAPI_INVALID_ARGUMENT: return absl::InvalidArgumentError(m);
    case HVD_CAPI_MISMATCH:  // as Horovod: ranks that disagree are a failed precondition
    case HVD_CAPI_PRECONDITION: return absl::FailedPreconditionError(m);
    case HVD_CAPI_ABORTED: return absl::AbortedError(m);
    case HVD_CAPI_TIMEOUT: return absl::DeadlineExceededError(m);
    default: return absl::InternalError(m);
  }
}

// The runtime's dtype of a TensorFlow dtype (bool travels as bytes); -1 if none.
int dtype_of(tensorflow::DataType t) {
  switch (t) {
    case tensorflow::DT_UINT8: return HVD_CAPI_UINT8;
    case tensorflow::DT_BOOL: return HVD_CAPI_UINT8;
    case tensorflow::DT_INT8: return HVD_CAPI_INT8;
    case tensorflow::DT_INT32: return HVD_CAPI_INT32;
    case tensorflow::DT_INT64: return HVD_CAPI_INT64;
    case tensorflow::DT_HALF: return HVD_CAPI_FLOAT16;
    case tensorflow::DT_BFLOAT16: return HVD_CAPI_BFLOAT16;
    case tensorflow::DT_FLOAT: return HVD_CAPI_FLOAT32;
    case tensorflow::DT_DOUBLE: return HVD_CAPI_FLOAT64;
    default: return -1;
  }
}

// One request as the kernel builds it: owns the name and shape the C request points to.
struct Req {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> splits;
  hvd_capi_request c{};
};

Req make_req(int op, std::string name, const Tensor& t, const void* data, int process_set) {
  Req r;
  r.name = std::move(name);
  for (int64_t d : t.shape().dim_sizes()) r.shape.push_back(d);
  r.c.op = op;
  r.c.dtype = dtype_of(t.dtype());
  r.c.input = data;
  r.c.prescale = r.c.postscale = 1.0;
  r.c.process_set = process_set;
  return r;
}

// One kernel invocation in flight: the runtime calls back once per request; the last call
// sets the status and calls done(). `finish` fills output i from a successful result.
struct Pending {
  OpKernelContext* ctx;
  AsyncOpKernel::DoneCallback done;
  std::function<absl::Status(int, const hvd_capi_result&)> finish;
  std::mutex mu;
  absl::Status status;
  int left = 0;
};

void on_done(void* arg, int index, const hvd_capi_result* r) {
  auto* p = static_cast<Pending*>(arg);
  bool last;
  {
    std::lock_guard<std::mutex> lk(p->mu);
    absl::Status s = status_of(r->code, r->message);
    if (s.ok() && p->finish) s = p->finish(index, *r);
    if (!s.ok() && p->status.ok()) p->status = s;
    last = --p->left == 0;
  }
  if (!last) return;
  if (!p->status.ok()) p->ctx->SetStatus(p->status);
  AsyncOpKernel::DoneCallback done = std::move(p->done);
  delete p;
  done();
}

// Hands `reqs` to the runtime (more than one: as one group). After this call the Pending
// may be gone: the callbacks may all have run.
void submit(std::vector<Req>& reqs, OpKernelContext* ctx, AsyncOpKernel::DoneCallback done,
            std::function<absl::Status(int, const hvd_capi_result&)> finish = nullptr) {
  if (reqs.empty()) {
    done();
    return;
  }
  std::vector<hvd_capi_request> raw;
  for (Req& r : reqs) {
    r.c.name = r.name.c_str();
    r.c.ndim = static_cast<int>(r.shape.size());
    r.c.shape = r.shape.data();
    r.c.splits = r.splits.data();
    r.c.nsplits = static_cast<int>(r.splits.size());
    raw.push_back(r.c);
  }
  auto* p = new Pending{ctx, std::move(done), std::move(finish), {}, absl::OkStatus(), static_cast<int>(raw.size())};
  g_capi.load()->enqueue(raw.data(), static_cast<int>(raw.size()), on_done, p);
}

// A result the runtime allocated, copied into a new output `i` of the op.
absl::Status copy_result(OpKernelContext* ctx, int i, const hvd_capi_result& r) {
  TensorShape shape;
  for (int d = 0; d < r.ndim; ++d) TF_RETURN_IF_ERROR(shape.AddDimWithStatus(r.shape[d]));
  Tensor* out = nullptr;
  TF_RETURN_IF_ERROR(ctx->allocate_output(i, shape, &out));
  const size_t bytes = out->tensor_data().size();
  if (bytes != r.bytes)
    return absl::InternalError("hvd: result of " + std::to_string(r.bytes) + " bytes for an output of " +
                               std::to_string(bytes));
  if (bytes) std::memcpy(const_cast<char*>(out->tensor_data().data()), r.data, bytes);
  return absl::OkStatus();
}

// What every collective kernel shares: its attributes, the readiness check and the names.
class HvdKernel : public AsyncOpKernel {
 public:
  explicit HvdKernel(OpKernelConstruction* c) : AsyncOpKernel(c) {
    if (c->HasAttr("process_set_id")) OP_REQUIRES_OK(c, c->GetAttr("process_set_id", &process_set_));
    if (c->HasAttr("ignore_name_scope")) OP_REQUIRES_OK(c, c->GetAttr("ignore_name_scope", &ignore_scope_));
    if (c->HasAttr("reduce_op")) OP_REQUIRES_OK(c, c->GetAttr("reduce_op", &reduce_op_));
  }

 protected:
  // The runtime is there (Horovod's wording when it is not).
  static absl::Status ready() {
    const hvd_capi* t = g_capi.load();
    if (!t || !t->initialized())
      return absl::FailedPreconditionError("Horovod has not been initialized; use hvd.init().");
    return absl::OkStatus();
  }

  // The name of this op's tensors: the tensor_name input, else the node's name.
  absl::Status base_name(OpKernelContext* ctx, std::string* out) const {
    const Tensor* t = nullptr;
    TF_RETURN_IF_ERROR(ctx->input("tensor_name", &t));
    if (t->dims() != 0) return absl::InvalidArgumentError("hvd: tensor_name must be a scalar string");
    *out = std::string(t->scalar<tensorflow::tstring>()());
    if (!out->empty()) return absl::OkStatus();
    *out = name();
    const size_t slash = out->find_last_of('/');
    if (ignore_scope_ && slash != std::string::npos) *out = out->substr(slash + 1);
    return absl::OkStatus();
  }

  // The readiness check and the base name; false (done() called with the error) if not.
  bool begin(OpKernelContext* ctx, const DoneCallback& done, std::string* base) const {
    absl::Status s = ready();
    if (s.ok()) s = base_name(ctx, base);
    if (s.ok()) return true;
    ctx->SetStatus(s);
    done();
    return false;
  }

  // One request per data input (every input but the name), each named after `base`.
  std::vector<Req> per_input(OpKernelContext* ctx, int op, const std::string& base) const {
    const int n = ctx->num_inputs() - 1;
    std::vector<Req> reqs;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      reqs.push_back(make_req(op, member_name(base, i, n), in, in.tensor_data().data(), process_set_));
      reqs.back().c.reduce_op = reduce_op_;
    }
    return reqs;
  }

  // The i-th name of a grouped op of n tensors.
  static std::string member_name(const std::string& base, int i, int n) {
    return n == 1 ? base : base + "." + std::to_string(i);
  }

  int process_set_ = 0;
  bool ignore_scope_ = false;
  int reduce_op_ = 1;
};

// Allreduce and grouped allreduce: the result goes straight into the output (the input's
// buffer when TensorFlow lets the op take it over).
class AllreduceKernel : public HvdKernel {
 public:
  explicit AllreduceKernel(OpKernelConstruction* c) : HvdKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("prescale_factor", &prescale_));
    OP_REQUIRES_OK(c, c->GetAttr("postscale_factor", &postscale_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::string base;
    if (!begin(ctx, done, &base)) return;
    std::vector<Req> reqs = per_input(ctx, HVD_CAPI_ALLREDUCE, base);
    for (int i = 0; i < static_cast<int>(reqs.size()); ++i) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK_ASYNC(ctx, ctx->forward_input_or_allocate_output({i}, i, ctx->input(i).shape(), &out), done);
      reqs[i].c.output = const_cast<char*>(out->tensor_data().data());
      reqs[i].c.prescale = prescale_;
      reqs[i].c.postscale = postscale_;
    }
    submit(reqs, ctx, std::move(done));
  }

 private:
  float prescale_ = 1.0f;
  float postscale_ = 1.0f;
};

// Allgather, reducescatter and their grouped forms: the runtime allocates each result; the
// callback copies it into the op's output.
class GatherLikeKernel : public HvdKernel {
 public:
  GatherLikeKernel(OpKernelConstruction* c, int op) : HvdKernel(c), op_(op) {}

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::string base;
    if (!begin(ctx, done, &base)) return;
    std::vector<Req> reqs = per_input(ctx, op_, base);
    submit(reqs, ctx, std::move(done),
           [ctx](int i, const hvd_capi_result& r) { return copy_result(ctx, i, r); });
  }

 private:
  int op_;
};

// A kernel class of `Base` bound to the collective `kOp` (what the registration builds).
template <class Base, int kOp>
class Bound : public Base {
 public:
  explicit Bound(OpKernelConstruction* c) : Base(c, kOp) {}
};
using AllgatherKernel = Bound<GatherLikeKernel, HVD_CAPI_ALLGATHER>;
using ReducescatterKernel = Bound<GatherLikeKernel, HVD_CAPI_REDUCESCATTER>;

// Broadcast works in place: on a copy of the input (or the input, when TensorFlow lets the
// op take it over), which is then the output.
class BroadcastKernel : public HvdKernel {
 public:
  explicit BroadcastKernel(OpKernelConstruction* c) : HvdKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("root_rank", &root_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::string name;
    if (!begin(ctx, done, &name)) return;
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ctx->forward_input_or_allocate_output({0}, 0, in.shape(), &out), done);
    char* buf = const_cast<char*>(out->tensor_data().data());
    if (buf != in.tensor_data().data() && in.tensor_data().size())
      std::memcpy(buf, in.tensor_data().data(), in.tensor_data().size());
    std::vector<Req> reqs;
    reqs.push_back(make_req(HVD_CAPI_BROADCAST, name, in, buf, process_set_));
    reqs.back().c.root = root_;
    submit(reqs, ctx, std::move(done));
  }

 private:
  int root_ = 0;
};

// Alltoall: the runtime allocates the result and tells the rows received from each peer.
class AlltoallKernel : public HvdKernel {
 public:
  explicit AlltoallKernel(OpKernelConstruction* c) : HvdKernel(c) {}

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::string name;
    if (!begin(ctx, done, &name)) return;
    const Tensor& in = ctx->input(0);
    const Tensor& splits = ctx->input(1);
    OP_REQUIRES_ASYNC(ctx, splits.dims() == 1, absl::InvalidArgumentError("hvd.alltoall: splits must be a vector"),
                      done);
    std::vector<Req> reqs;
    reqs.push_back(make_req(HVD_CAPI_ALLTOALL, name, in, in.tensor_data().data(), process_set_));
    auto sv = splits.vec<int32_t>();
    for (int64_t i = 0; i < sv.size(); ++i) reqs.back().splits.push_back(sv(i));
    submit(reqs, ctx, std::move(done), [ctx](int, const hvd_capi_result& r) {
      TF_RETURN_IF_ERROR(copy_result(ctx, 0, r));
      Tensor* rs = nullptr;
      TF_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape({r.nsplits}), &rs));
      auto v = rs->vec<int32_t>();
      for (int i = 0; i < r.nsplits; ++i) v(i) = static_cast<int32_t>(r.received_splits[i]);
      return absl::OkStatus();
    });
  }
};

// join and barrier: no data, the name the runtime reserves for each; join outputs the
// last rank to join.
class ControlKernel : public HvdKernel {
 public:
  ControlKernel(OpKernelConstruction* c, int op) : HvdKernel(c), op_(op) {}

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    OP_REQUIRES_OK_ASYNC(ctx, ready(), done);
    std::vector<Req> reqs(1);
    reqs[0].name = op_ == HVD_CAPI_JOIN ? "join" : "barrier";
    reqs[0].c.op = op_;
    reqs[0].c.dtype = HVD_CAPI_INT32;
    reqs[0].c.process_set = process_set_;
    if (op_ != HVD_CAPI_JOIN) return submit(reqs, ctx, std::move(done));
    submit(reqs, ctx, std::move(done), [ctx](int, const hvd_capi_result& r) {
      Tensor* out = nullptr;
      TF_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({}), &out));
      out->scalar<int32_t>()() = r.last_joined_rank;
      return absl::OkStatus();
    });
  }

 private:
  int op_;
};

using JoinKernel = Bound<ControlKernel, HVD_CAPI_JOIN>;
using BarrierKernel = Bound<ControlKernel, HVD_CAPI_BARRIER>;

// rank/size/local_rank/local_size when the op runs (not when the graph was built).
class QueryKernel : public tensorflow::OpKernel {
 public:
  explicit QueryKernel(OpKernelConstruction* c) : OpKernel(c) {
    std::string q;
    OP_REQUIRES_OK(c, c->GetAttr("query", &q));
    query_ = q;
  }

  void Compute(OpKernelContext* ctx) override {
    const hvd_capi* t = g_capi.load();
    OP_REQUIRES(ctx, t && t->initialized(),
                absl::FailedPreconditionError("Horovod has not been initialized; use hvd.init()."));
    int v = query_ == "rank" ? t->rank() : query_ == "size" ? t->size() : query_ == "local_rank" ? t->local_rank()
                                                                                                  : t->local_size();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    out->scalar<int32_t>()() = v;
  }

 private:
  std::string query_;
};

}  // namespace

#define HVD_CPU_KERNEL(op, cls) REGISTER_KERNEL_BUILDER(Name(op).Device(tensorflow::DEVICE_CPU), cls)
HVD_CPU_KERNEL("HvdAllreduce", AllreduceKernel);
HVD_CPU_KERNEL("HvdGroupedAllreduce", AllreduceKernel);
HVD_CPU_KERNEL("HvdAllgather", AllgatherKernel);
HVD_CPU_KERNEL("HvdGroupedAllgather", AllgatherKernel);
HVD_CPU_KERNEL("HvdReducescatter", ReducescatterKernel);
HVD_CPU_KERNEL("HvdGroupedReducescatter", ReducescatterKernel);
HVD_CPU_KERNEL("HvdBroadcast", BroadcastKernel);
HVD_CPU_KERNEL("HvdAlltoall", AlltoallKernel);
HVD_CPU_KERNEL("HvdJoin", JoinKernel);
HVD_CPU_KERNEL("HvdBarrier", BarrierKernel);
HVD_CPU_KERNEL("HvdQuery", QueryKernel);

// Called once by hvd.tensorflow (ctypes) with hvd._core.capi_table(): the runtime the ops use.
// Returns 0, or the table's version when this library was built for another one.
extern "C" __attribute__((visibility("default"))) int hvd_capi_install(const void* table) {
  const auto* t = static_cast<const hvd_capi*>(table);
  if (!t || t->version != HVD_CAPI_VERSION) return t ? t->version : -1;
  g_capi.store(t);
  return 0;
}
