// hvd._core: the Python binding of the hvd runtime (the facade's default Runtime).
//
// Tensors cross as (address, dtype name, shape): the Python side passes a torch tensor's
// data_ptr(), so the runtime reads and writes the tensor's own storage (no copy). Results
// the runtime allocates (allgather, alltoall, reducescatter) stay in the handle until
// copy_output() puts them into a tensor Python allocated. A failed Status becomes
// hvd._core.HvdError (a RuntimeError) carrying the runtime's message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "capi.h"
#include "hvd/hvd.h"
#include "hvd/tcp.h"
#ifdef HVD_HAVE_MPI
#include <mpi.h>
#endif

namespace py = pybind11;

namespace {

// The exception every failed call raises (registered as hvd._core.HvdError).
struct HvdError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(const hvd::Status& s) {
  if (!s.ok()) throw HvdError(s.to_string());
}

hvd::Runtime& rt() {
  hvd::Runtime* r = hvd::runtime();
  if (!r) throw HvdError("Precondition: hvd has not been initialized; call hvd.init() first");
  return *r;
}

// The variable that picks the world, as the runtime reads it (HVD_CONTROLLER, else
// HOROVOD_CONTROLLER): tcp or gloo is hvdrun --tcp's world, mpi or nothing MPI's. The
// runtime takes any other value for MPI; a misspelt one is an error here instead.
void check_controller() {
  const char* var = "HVD_CONTROLLER";
  const char* v = std::getenv(var);
  if (!v) v = std::getenv(var = "HOROVOD_CONTROLLER");
  if (!v || !*v) return;
  const std::string c = v;
  if (c != "mpi" && c != "tcp" && c != "gloo")
    throw HvdError(std::string("InvalidArgument: ") + var + "='" + c + "' is not one of mpi, tcp, gloo");
}

// An MPI process has one MPI world: after hvd.shutdown() finalized MPI, MPI_Init may not be
// called again (Open MPI aborts the process). Say so instead.
void check_mpi_not_finalized() {
#ifdef HVD_HAVE_MPI
  if (hvd::tcp_launched_from_env()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    throw HvdError(
        "Precondition: hvd.init() after hvd.shutdown() is not supported under MPI: MPI cannot be "
        "initialized again after MPI_Finalize (hvdrun --tcp can re-initialize)");
#endif
}

hvd::DataType dtype_of(const std::string& name) {
  auto d = hvd::parse_dtype(name);
  if (!d) throw py::value_error("hvd: unsupported dtype '" + name + "'");
  return *d;
}

hvd::ReduceOp op_of(int op) {
  if (op < 0 || op > static_cast<int>(hvd::ReduceOp::kAdasum))
    throw py::value_error("hvd: unknown reduction op " + std::to_string(op));
  return static_cast<hvd::ReduceOp>(op);
}

hvd::Tensor tensor(uintptr_t ptr, const std::string& dtype, const std::vector<int64_t>& shape) {
  return hvd::Tensor{reinterpret_cast<void*>(ptr), dtype_of(dtype), shape, hvd::DeviceKind::kCPU};
}

std::vector<hvd::Tensor> tensors(const std::vector<uintptr_t>& ptrs, const std::vector<std::string>& dtypes,
                                 const std::vector<std::vector<int64_t>>& shapes) {
  if (ptrs.size() != dtypes.size() || ptrs.size() != shapes.size())
    throw py::value_error("hvd: grouped call with lists of different lengths");
  std::vector<hvd::Tensor> out;
  for (size_t i = 0; i < ptrs.size(); ++i) out.push_back(tensor(ptrs[i], dtypes[i], shapes[i]));
  return out;
}

// Waits without holding the GIL (other Python threads, and backward hooks, keep running).
void wait(const hvd::Handle& h) {
  hvd::Status s;
  {
    py::gil_scoped_release nogil;
    s = h->wait();
  }
  check(s);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "hvd runtime binding (use hvd.torch)";
  py::register_exception<HvdError>(m, "HvdError", PyExc_RuntimeError);

  py::class_<hvd::OpHandle, std::shared_ptr<hvd::OpHandle>>(m, "Handle")
      .def("wait", &wait, "blocks until done; raises HvdError if the operation failed")
      .def("poll", [](hvd::OpHandle& h) { return h.poll(); })
      .def("output_shape", [](hvd::OpHandle& h) { return h.output_shape(); })
      .def("output_bytes", [](hvd::OpHandle& h) { return h.output_bytes(); })
      .def("received_splits", [](hvd::OpHandle& h) { return h.received_splits(); })
      .def("last_joined_rank", [](hvd::OpHandle& h) { return h.last_joined_rank(); })
      // The message of a call refused as it was made (InvalidArgument before any cycle: a
      // name already pending, bad splits, ...), else None.
      .def("refused", [](hvd::OpHandle& h) -> py::object {
        if (h.cycle() >= 0 || !h.poll()) return py::none();
        const hvd::Status s = h.wait();
        if (s.code() != hvd::StatusCode::kInvalidArgument) return py::none();
        return py::str(s.to_string());
      })
      .def("copy_output", [](hvd::OpHandle& h, uintptr_t dst, size_t bytes) {
        if (bytes != h.output_bytes())
          throw py::value_error("hvd: output is " + std::to_string(h.output_bytes()) + " bytes, not " +
                                std::to_string(bytes));
        if (bytes) std::memcpy(reinterpret_cast<void*>(dst), h.output(), bytes);
      });

  m.def("init", [] {
    if (!hvd::is_initialized()) {
      check_controller();
      check_mpi_not_finalized();
    }
    py::gil_scoped_release nogil;
    check(hvd::init());
  });
  m.def("shutdown", [] {
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = hvd::shutdown();
    }
    check(s);
  });
  m.def("is_initialized", &hvd::is_initialized);
  // Elastic mode (hvd.elastic): the reset point and the generations of the world.
  m.def("elastic_enabled", &hvd::elastic_enabled);
  m.def("elastic_generation", &hvd::elastic_generation);
  m.def("elastic_latest_generation", [] {
    int64_t g = 0;
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = hvd::elastic_latest_generation(&g);
    }
    check(s);
    return g;
  });
  m.def("elastic_reset", [] {
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = hvd::elastic_reset();
    }
    check(s);
  });
#ifdef HVD_HAVE_MPI
  m.attr("mpi_built") = true;
  // MPI_THREAD_MULTIPLE in effect (the runtime asks for it; MPI may give less).
  m.def("mpi_threads_supported", [] {
    int inited = 0, finalized = 0, level = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Query_thread(&level);
    return inited && !finalized && level >= MPI_THREAD_MULTIPLE;
  });
#else
  m.attr("mpi_built") = false;
  m.def("mpi_threads_supported", [] { return false; });
#endif
  m.def("rank", &hvd::rank);
  m.def("size", &hvd::size);
  m.def("local_rank", &hvd::local_rank);
  m.def("local_size", &hvd::local_size);
  m.def("cross_rank", &hvd::cross_rank);
  m.def("cross_size", &hvd::cross_size);
  m.def("start_timeline", [](const std::string& path, bool mark_cycles) {
    check(rt().start_timeline(path, mark_cycles));
  });
  m.def("stop_timeline", [] { check(rt().stop_timeline()); });
  m.def("stall_shutdown_time", [] { return rt().config().stall_shutdown_time_s; });
  // The runtime's counters so far (responses after fusion, tensors completed, small cached
  // allreduces reduced on the negotiation's bit exchange: eager_tensors, ...).
  m.def("stats", [] {
    const hvd::RuntimeStats st = rt().stats();
    const std::pair<const char*, int64_t> counters[] = {
        {"cycles", st.cycles}, {"responses", st.responses}, {"tensors", st.tensors},
        {"bytes_allreduced", st.bytes_allreduced}, {"cache_hits", st.cache_hits}, {"cache_misses", st.cache_misses},
        {"eager_tensors", st.eager_tensors}};
    py::dict d;
    for (const auto& [key, value] : counters) d[key] = value;
    return d;
  });
  // The address of the C table (src/hvd_capi.h) an op library uses to reach this runtime.
  m.def("capi_table", [] { return reinterpret_cast<uintptr_t>(hvd_capi_table()); });
  // Recording the allreduces that come through that table (hvd.tensorflow.record_trace):
  // trace_stop() gives (name, dtype, shape, enqueued_s, done_s) each, in enqueue order.
  m.def("trace_start", [](size_t max_events) { capi_trace_start(max_events); }, py::arg("max_events"));
  m.def("trace_stop", [] {
    py::list out;
    for (const CapiTraceEvent& e : capi_trace_stop())
      out.append(py::make_tuple(e.name, std::string(hvd::dtype_name(static_cast<hvd::DataType>(e.dtype))), e.shape,
                                e.enqueued_s, e.done_s));
    return out;
  });

  m.def("allreduce_async", [](const std::string& name, uintptr_t in, uintptr_t out, const std::string& dtype,
                              const std::vector<int64_t>& shape, int op, double pre, double post, int ps) {
    return rt().allreduce_async(name, tensor(in, dtype, shape), tensor(out, dtype, shape), op_of(op), pre, post, ps);
  });
  m.def("grouped_allreduce_async",
        [](const std::vector<std::string>& names, const std::vector<uintptr_t>& ins, const std::vector<uintptr_t>& outs,
           const std::vector<std::string>& dtypes, const std::vector<std::vector<int64_t>>& shapes, int op, int ps) {
          return rt().grouped_allreduce_async(names, tensors(ins, dtypes, shapes), tensors(outs, dtypes, shapes),
                                              op_of(op), ps);
        });
  m.def("allgather_async", [](const std::string& name, uintptr_t in, const std::string& dtype,
                              const std::vector<int64_t>& shape, int ps) {
    return rt().allgather_async(name, tensor(in, dtype, shape), ps);
  });
  m.def("grouped_allgather_async", [](const std::vector<std::string>& names, const std::vector<uintptr_t>& ins,
                                      const std::vector<std::string>& dtypes,
                                      const std::vector<std::vector<int64_t>>& shapes, int ps) {
    return rt().grouped_allgather_async(names, tensors(ins, dtypes, shapes), ps);
  });
  m.def("broadcast_async", [](const std::string& name, uintptr_t buf, const std::string& dtype,
                              const std::vector<int64_t>& shape, int root, int ps) {
    return rt().broadcast_async(name, tensor(buf, dtype, shape), root, ps);
  });
  m.def("alltoall_async", [](const std::string& name, uintptr_t in, const std::string& dtype,
                             const std::vector<int64_t>& shape, const std::vector<int64_t>& splits, int ps) {
    return rt().alltoall_async(name, tensor(in, dtype, shape), splits, ps);
  });
  m.def("reducescatter_async", [](const std::string& name, uintptr_t in, const std::string& dtype,
                                  const std::vector<int64_t>& shape, int op, int ps) {
    return rt().reducescatter_async(name, tensor(in, dtype, shape), op_of(op), ps);
  });
  m.def("grouped_reducescatter_async", [](const std::vector<std::string>& names, const std::vector<uintptr_t>& ins,
                                          const std::vector<std::string>& dtypes,
                                          const std::vector<std::vector<int64_t>>& shapes, int op, int ps) {
    return rt().grouped_reducescatter_async(names, tensors(ins, dtypes, shapes), op_of(op), ps);
  });
  m.def("barrier", [](int ps) {
    hvd::Runtime& r = rt();
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = r.barrier(ps);
    }
    check(s);
  });
  m.def("join", [] {
    hvd::Runtime& r = rt();
    int last = -1;
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = r.join(&last);
    }
    check(s);
    return last;
  });
  m.def("add_process_set", [](const std::vector<int>& ranks) {
    hvd::Runtime& r = rt();
    int id = -1;
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = r.add_process_set(ranks, &id);
    }
    check(s);
    return id;
  });
  m.def("remove_process_set", [](int id) {
    hvd::Runtime& r = rt();
    hvd::Status s;
    {
      py::gil_scoped_release nogil;
      s = r.remove_process_set(id);
    }
    check(s);
  });
}
