// The free-function API over one default Runtime per process (the only process-level
// state; the core itself has none). Started by hvdrun --tcp (HVD_CONTROLLER=tcp) the world
// is the TCP backend's; else, under MPI, MPI_COMM_WORLD; built without MPI, a single rank.
#include <cstdio>
#include <memory>

#include "hvd/hvd.h"
#include "hvd/local.h"
#include "hvd/tcp.h"

#include "core/handle.h"
#ifdef HVD_HAVE_MPI
#include "hvd/mpi.h"
#endif

namespace hvd {

namespace {

struct DefaultInstance {
  OwnedSeams seams;
  std::unique_ptr<Runtime> runtime;
  int64_t generation = 0;  // elastic mode: the generation of the current world
  int64_t tcp_worlds = 0;  // hvdrun --tcp: worlds this process has joined (init after shutdown)
};

DefaultInstance& instance() {
  static DefaultInstance inst;
  return inst;
}

}  // namespace

Status init() {
  DefaultInstance& d = instance();
  if (d.runtime) return Status::OK();
  Config cfg;
  HVD_RETURN_IF_ERROR(Config::from_process_env(&cfg));
  std::unique_ptr<Transport> world;
  if (tcp_elastic_from_env()) {  // hvdrun's elastic driver: the next generation naming us
    TcpOptions opts;
    HVD_RETURN_IF_ERROR(tcp_elastic_options_from_env(&opts));
    opts.ranks_per_node = cfg.ranks_per_node;
    HVD_RETURN_IF_ERROR(join_elastic_tcp_world(opts, d.generation, &d.generation, &world));
  } else if (tcp_launched_from_env()) {  // hvdrun --tcp: sockets and the rendezvous, no MPI
    TcpOptions opts;
    HVD_RETURN_IF_ERROR(tcp_options_from_env(&opts));
    opts.ranks_per_node = cfg.ranks_per_node;
    // Each init after a shutdown meets under a scope of its own: the addresses the previous
    // world left in the store are stale (a rank that read them connected to a closed port).
    // Every rank counts its inits alike, as it must run them alike.
    if (d.tcp_worlds > 0) opts.scope = "world." + std::to_string(d.tcp_worlds);
    HVD_RETURN_IF_ERROR(make_tcp_world_transport(opts, &world));
    ++d.tcp_worlds;
  } else {
#ifdef HVD_HAVE_MPI
    HVD_RETURN_IF_ERROR(init_mpi(nullptr, nullptr));
    world = make_mpi_world_transport(cfg.ranks_per_node);
#else
    world = make_single_rank_transport();
#endif
  }
  d.seams = host_seams(std::move(world));
  return start_runtime(RuntimeOptions{d.seams.view(), cfg}, &d.runtime);
}

Status shutdown() {
  DefaultInstance& d = instance();
  Status s;
  double give_up_s = 0;  // how long to wait for every rank to shut down (0: forever)
  int me = -1;
  if (d.runtime) {
    give_up_s = d.runtime->config().stall_shutdown_time_s;
    me = d.runtime->rank();
    s = d.runtime->shutdown();
  }
  d.runtime.reset();
  d.seams = OwnedSeams{};
#ifdef HVD_HAVE_MPI
  // MPI_Finalize waits for every rank: after a stall (a rank that never submitted, or died)
  // it would block until the missing one comes back. With a stall shutdown time, wait that
  // long at most; MPI is then finalized when the process exits.
  if (!finalize_mpi_within(give_up_s))
    std::fprintf(stderr,
                 "[hvd rank %d WARNING] shutdown: not every rank shut down within %g s "
                 "(HVD_STALL_SHUTDOWN_TIME_SECONDS); MPI will be finalized at process exit\n",
                 me, give_up_s);
#endif
  return s;
}

bool elastic_enabled() { return tcp_elastic_from_env(); }
int64_t elastic_generation() { return instance().generation; }

Status elastic_latest_generation(int64_t* gen) {
  if (!elastic_enabled()) return Status::Precondition("not an elastic worker (run under hvdrun --host-discovery-script)");
  TcpOptions opts;
  HVD_RETURN_IF_ERROR(tcp_elastic_options_from_env(&opts));
  return latest_elastic_generation(opts, gen);
}

Status elastic_reset() {
  if (!elastic_enabled()) return Status::Precondition("elastic_reset: not an elastic worker (run under hvdrun --host-discovery-script)");
  (void)shutdown();  // after a lost peer the old world's shutdown fails; the new one is what counts
  return init();
}

bool is_initialized() { return instance().runtime != nullptr; }
Runtime* runtime() { return instance().runtime.get(); }
int rank() { return runtime() ? runtime()->rank() : -1; }
int size() { return runtime() ? runtime()->size() : -1; }
int local_rank() { return runtime() ? runtime()->local_rank() : -1; }
int local_size() { return runtime() ? runtime()->local_size() : -1; }
int cross_rank() { return runtime() ? runtime()->cross_rank() : -1; }
int cross_size() { return runtime() ? runtime()->cross_size() : -1; }

namespace {
Status not_init() { return Status::Precondition("hvd::init() has not been called"); }
Handle not_init_handle() { return finished_handle(not_init()); }
}  // namespace

Status allreduce(const std::string& name, const Tensor& in, const Tensor& out, ReduceOp op,
                 double prescale, double postscale) {
  return runtime() ? runtime()->allreduce(name, in, out, op, prescale, postscale) : not_init();
}
Handle allreduce_async(const std::string& name, const Tensor& in, const Tensor& out, ReduceOp op,
                       double prescale, double postscale) {
  return runtime() ? runtime()->allreduce_async(name, in, out, op, prescale, postscale) : not_init_handle();
}
Status grouped_allreduce(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                         const std::vector<Tensor>& outs, ReduceOp op) {
  return runtime() ? runtime()->grouped_allreduce(names, ins, outs, op) : not_init();
}
Handle allgather_async(const std::string& name, const Tensor& in) {
  return runtime() ? runtime()->allgather_async(name, in) : not_init_handle();
}
std::vector<Handle> grouped_allgather_async(const std::vector<std::string>& names,
                                            const std::vector<Tensor>& ins) {
  return runtime() ? runtime()->grouped_allgather_async(names, ins)
                   : std::vector<Handle>{not_init_handle()};
}
Status grouped_allgather(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                         std::vector<Handle>* out) {
  return runtime() ? runtime()->grouped_allgather(names, ins, out) : not_init();
}
std::vector<Handle> grouped_reducescatter_async(const std::vector<std::string>& names,
                                                const std::vector<Tensor>& ins, ReduceOp op) {
  return runtime() ? runtime()->grouped_reducescatter_async(names, ins, op)
                   : std::vector<Handle>{not_init_handle()};
}
Status grouped_reducescatter(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                             std::vector<Handle>* out, ReduceOp op) {
  return runtime() ? runtime()->grouped_reducescatter(names, ins, out, op) : not_init();
}
Status broadcast(const std::string& name, const Tensor& buf, int root) {
  return runtime() ? runtime()->broadcast(name, buf, root) : not_init();
}
Handle alltoall_async(const std::string& name, const Tensor& in, const std::vector<int64_t>& splits) {
  return runtime() ? runtime()->alltoall_async(name, in, splits) : not_init_handle();
}
Handle reducescatter_async(const std::string& name, const Tensor& in, ReduceOp op) {
  return runtime() ? runtime()->reducescatter_async(name, in, op) : not_init_handle();
}
Status barrier() { return runtime() ? runtime()->barrier() : not_init(); }
Status join(int* last) { return runtime() ? runtime()->join(last) : not_init(); }
Status add_process_set(const std::vector<int>& ranks, int* id) {
  return runtime() ? runtime()->add_process_set(ranks, id) : not_init();
}
Status remove_process_set(int id) {
  return runtime() ? runtime()->remove_process_set(id) : not_init();
}

}  // namespace hvd
