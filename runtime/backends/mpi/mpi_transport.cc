// Transport over an MPI communicator. A rank with a core of its own spins briefly in
// every wait (small messages answer within microseconds); then waits without a deadline
// use MPI_Waitall, and waits with one poll MPI_Test with a growing back-off so idle ranks
// do not burn the cores their peers need (WaitPolicy).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "backends/mpi/mpi_native.h"
#include "hvd/mpi.h"

namespace hvd {

namespace {

bool g_we_initialized = false;  // facade-level process state (MPI itself is per process)
bool g_finalize_at_exit = false;  // a peer was missing at shutdown: only exit finalizes

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr size_t kMaxPiece = size_t{1} << 30;  // MPI counts are int: send big buffers in pieces

// World rank of `peer` in `comm` (what a user sees in mpirun's output), or `peer` itself
// when it cannot be translated.
int world_rank_of(MPI_Comm comm, int peer) {
  MPI_Group group, world;
  if (MPI_Comm_group(comm, &group) != MPI_SUCCESS) return peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int out = peer;
  MPI_Group_translate_ranks(group, 1, &peer, world, &out);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out == MPI_UNDEFINED ? peer : out;
}

// How a rank waits for a transfer (MpiTransport decides once per world).
struct WaitPolicy {
  /// The rank has a core of its own (no more ranks on this host than CPUs it may run on):
  /// spin first, for up to 50 us, without leaving the core.
  bool spin = false;
  /// Open MPI yields the core itself whenever a test finds nothing (mpi_yield_when_idle,
  /// which hvdbench and hvdrun set on one host): a yield of ours on top would give the
  /// core away twice per poll.
  bool mpi_yields = false;
};

// Spins on `done` for up to 50 us without leaving the core (the clock read once per 64
// polls); whether it became true.
template <class Done>
bool spin_briefly(Done done) {
  if (done()) return true;
  const double start = steady_seconds();
  for (int i = 1;; ++i) {
    if (done()) return true;
    if ((i & 63) == 0 && steady_seconds() - start >= 50e-6) return false;
  }
}

// Polls `done` until it is true (OK) or platform time `deadline` passes (false). A rank
// with a core of its own first spins (a small message's answer comes within a few
// microseconds, and a sched_yield per poll costs more than the message itself); then, and
// from the start on an oversubscribed host, it yields until 200 us (negotiation answers
// usually arrive by then), then backs off with short sleeps so a waiting rank leaves the
// core to its peers.
template <class Done>
bool poll_until(double deadline, WaitPolicy w, Done done) {
  if (w.spin && spin_briefly(done)) return true;  // (deadlines are seconds away, not 50 us)
  const double start = steady_seconds();
  double pause = 10e-6;
  while (!done()) {
    const double now = steady_seconds();
    if (now >= deadline) return false;
    if (now - start < 200e-6) {
      if (!w.mpi_yields) std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      pause = std::min(pause * 2, 100e-6);
    }
  }
  return true;
}

class MpiRequest final : public Request {
 public:
  /// `sending`, `peer` (a rank of `comm`), `bytes` and `tag` only name the transfer when it
  /// times out: a dead or stalled peer must be named, not just "a transfer".
  /// One MPI request (the common case: held inline, no allocation) or several (a buffer
  /// sent in pieces of at most kMaxPiece).
  MpiRequest(MPI_Request one, MPI_Comm comm, bool sending, int peer, size_t bytes, int tag, WaitPolicy wait)
      : one_(one), comm_(comm), sending_(sending), peer_(peer), bytes_(bytes), tag_(tag), wait_(wait) {}
  MpiRequest(std::vector<MPI_Request> reqs, MPI_Comm comm, bool sending, int peer, size_t bytes,
             int tag, WaitPolicy wait)
      : many_(std::move(reqs)), comm_(comm), sending_(sending), peer_(peer), bytes_(bytes), tag_(tag),
        wait_(wait) {}
  MpiRequest(MpiRequest&&) = delete;
  ~MpiRequest() override {
    for (MPI_Request& r : many_.empty() ? std::span<MPI_Request>(&one_, 1) : std::span<MPI_Request>(many_)) {
      if (r == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (!done) {
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
  }
  bool test() override {
    int done = 0;
    if (many_.empty()) MPI_Test(&one_, &done, MPI_STATUS_IGNORE);
    else MPI_Testall(static_cast<int>(many_.size()), many_.data(), &done, MPI_STATUSES_IGNORE);
    return done != 0;
  }
  Status wait(double deadline) override {
    if (deadline == kNoDeadline) {
      // A small transfer is done within the spin; MPI_Waitall (which may yield its core on
      // every progress loop) for what takes longer.
      if (wait_.spin && spin_briefly([this] { return test(); })) return Status::OK();
      int rc = many_.empty() ? MPI_Wait(&one_, MPI_STATUS_IGNORE)
                             : MPI_Waitall(static_cast<int>(many_.size()), many_.data(), MPI_STATUSES_IGNORE);
      return rc == MPI_SUCCESS ? Status::OK() : Status::Internal("MPI_Waitall failed " + describe());
    }
    if (!poll_until(deadline, wait_, [this] { return test(); }))
      return Status::Timeout("MPI transfer timed out " + describe() + " (rank " +
                                 std::to_string(world_rank_of(comm_, peer_)) + " may have died or stalled)",
                             world_rank_of(comm_, peer_));
    return Status::OK();
  }

 private:
  // "sending 4096 bytes to rank 2 (tag 7)", in world ranks.
  std::string describe() const {
    return std::string(sending_ ? "sending " : "receiving ") + std::to_string(bytes_) +
           " bytes " + (sending_ ? "to" : "from") + " rank " +
           std::to_string(world_rank_of(comm_, peer_)) + " (tag " + std::to_string(tag_) + ")";
  }

  MPI_Request one_ = MPI_REQUEST_NULL;
  std::vector<MPI_Request> many_;
  MPI_Comm comm_;
  bool sending_;
  int peer_;
  size_t bytes_;
  int tag_;
  WaitPolicy wait_;
};

// A receive of any size: the message is matched with MPI_Improbe (MPI_Mprobe when there is
// no deadline), which tells its size, and then received with MPI_Imrecv into
// sink->room(size). Matching happens when the request is tested or waited on, so another
// receive from the same peer and tag must not be posted before this one completes.
// Messages of kMaxPiece bytes or more travel in several MPI messages: they cannot be
// received this way (control messages are far smaller).
class MpiSizedRecv final : public Request {
 public:
  MpiSizedRecv(MPI_Comm comm, int peer, int tag, SizedSink* sink, WaitPolicy wait)
      : comm_(comm), peer_(peer), tag_(tag), sink_(sink), wait_(wait) {}
  ~MpiSizedRecv() override {
    if (data_ && !done_) (void)data_->wait(kNoDeadline);  // matched: the bytes are on their way
  }
  bool test() override {
    if (!data_) {
      int found = 0;
      MPI_Message msg;
      MPI_Status st;
      MPI_Improbe(peer_, tag_, comm_, &found, &msg, &st);
      if (!found) return false;
      receive(msg, st);
    }
    if (!done_) done_ = data_->test();
    return done_;
  }
  Status wait(double deadline) override {
    if (deadline == kNoDeadline && !data_) {
      MPI_Message msg;
      MPI_Status st;
      MPI_Mprobe(peer_, tag_, comm_, &msg, &st);
      receive(msg, st);
    }
    if (!data_ && !poll_until(deadline, wait_, [this] { return data_.has_value() || test(); }))
      return Status::Timeout("MPI transfer timed out receiving a message from rank " +
                                 std::to_string(world_rank_of(comm_, peer_)) + " (tag " + std::to_string(tag_) +
                                 "; it may have died or stalled)",
                             world_rank_of(comm_, peer_));
    if (!error_.ok()) return error_;
    Status s = data_->wait(deadline);
    done_ = done_ || s.ok();
    return s;
  }

 private:
  void receive(MPI_Message msg, const MPI_Status& st) {
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    void* dst = sink_->room(static_cast<size_t>(n));
    if (n && !dst) error_ = Status::Internal("no room for a message of " + std::to_string(n) + " bytes");
    if (static_cast<size_t>(n) >= kMaxPiece)
      error_ = Status::Internal("a message of 1 GiB or more cannot be received without its size");
    MPI_Request r;
    static char spare;  // MPI_Imrecv needs the message consumed even when it is refused
    MPI_Imrecv(error_.ok() ? dst : &spare, error_.ok() ? n : 0, MPI_BYTE, &msg, &r);
    data_.emplace(r, comm_, false, peer_, static_cast<size_t>(n), tag_, wait_);
  }
  MPI_Comm comm_;
  int peer_, tag_;
  SizedSink* sink_;
  WaitPolicy wait_;
  std::optional<MpiRequest> data_;  // once matched: the receive of its bytes
  Status error_;
  bool done_ = false;
};

class MpiTransport final : public Transport {
 public:
  /// `node_key` < 0: the node is this host (shared memory), cut into groups of
  /// `ranks_per_node` consecutive ranks when that is > 0. Otherwise every rank passes its
  /// node's key (a split passes the parent's node id, so sub-groups keep the layout).
  /// `wait`: how transfers are waited for (a split takes the parent's; a new world spins
  /// when this host runs no more of its ranks than it has CPUs).
  MpiTransport(MPI_Comm comm, bool owned, int64_t ranks_per_node = 0, int64_t node_key = -1,
               WaitPolicy wait = {})
      : comm_(comm), owned_(owned), wait_(wait), native_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    compute_nodes(node_key >= 0 ? node_key : host_key(ranks_per_node));
  }
  ~MpiTransport() override {
    if (owned_) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node_of(int r) const override { return node_[static_cast<size_t>(r)]; }
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override {
    MPI_Datatype t;
    if (!gather_type(pieces, &t))
      return send_packed(pieces, [&](const void* data, size_t n) { return isend_bytes(peer, data, n, tag); });
    MPI_Request r;
    MPI_Isend(MPI_BOTTOM, 1, t, peer, tag, comm_, &r);
    MPI_Type_free(&t);  // MPI keeps it alive until the send completes
    return std::make_unique<MpiRequest>(r, comm_, true, peer, total_bytes(pieces), tag, wait_);
  }
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override {
    if (into.sink) return std::make_unique<MpiSizedRecv>(comm_, peer, tag, into.sink, wait_);
    MPI_Datatype t;
    if (!gather_type(into.pieces, &t))
      return recv_packed(into.pieces, [&](void* data, size_t n) { return irecv_bytes(peer, data, n, tag); });
    MPI_Request r;
    MPI_Irecv(MPI_BOTTOM, 1, t, peer, tag, comm_, &r);
    MPI_Type_free(&t);
    return std::make_unique<MpiRequest>(r, comm_, false, peer, total_bytes(into.pieces), tag, wait_);
  }
  std::unique_ptr<Transport> split(int color, int key) override {
    MPI_Comm sub;
    MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub);
    if (sub == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiTransport>(sub, true, 0, node_[static_cast<size_t>(rank_)], wait_);
  }
  NativeCollectives* native() override { return &native_; }
  std::string name() const override { return "mpi"; }

 private:
  // One buffer, in MPI-sized pieces of at most kMaxPiece (counts are int).
  std::unique_ptr<Request> isend_bytes(int peer, const void* data, size_t bytes, int tag) {
    if (bytes < kMaxPiece) {
      MPI_Request r;
      MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &r);
      return std::make_unique<MpiRequest>(r, comm_, true, peer, bytes, tag, wait_);
    }
    std::vector<MPI_Request> reqs;
    for (size_t o = 0; o < bytes || o == 0; o += kMaxPiece) {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes - o));
      reqs.emplace_back();
      MPI_Isend(static_cast<const char*>(data) + o, n, MPI_BYTE, peer, tag, comm_, &reqs.back());
      if (bytes == 0) break;
    }
    return std::make_unique<MpiRequest>(std::move(reqs), comm_, true, peer, bytes, tag, wait_);
  }
  std::unique_ptr<Request> irecv_bytes(int peer, void* data, size_t bytes, int tag) {
    if (bytes < kMaxPiece) {
      MPI_Request r;
      MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &r);
      return std::make_unique<MpiRequest>(r, comm_, false, peer, bytes, tag, wait_);
    }
    std::vector<MPI_Request> reqs;
    for (size_t o = 0; o < bytes || o == 0; o += kMaxPiece) {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes - o));
      reqs.emplace_back();
      MPI_Irecv(static_cast<char*>(data) + o, n, MPI_BYTE, peer, tag, comm_, &reqs.back());
      if (bytes == 0) break;
    }
    return std::make_unique<MpiRequest>(std::move(reqs), comm_, false, peer, bytes, tag, wait_);
  }

  // An hindexed datatype over absolute addresses: the pieces travel as one message with
  // no staging copy. False when a piece cannot be described (phantom, > INT_MAX, 1 piece).
  static bool gather_type(IoSpan pieces, MPI_Datatype* t) {
    if (pieces.size() < 2) return false;
    std::vector<int> lens;
    std::vector<MPI_Aint> disps;
    size_t total = 0;
    for (const IoPiece& p : pieces) {
      if (!p.data || p.bytes > INT_MAX) return false;
      MPI_Aint a;
      MPI_Get_address(p.data, &a);
      lens.push_back(static_cast<int>(p.bytes));
      disps.push_back(a);
      total += p.bytes;
    }
    if (total > INT_MAX) return false;
    MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, t);
    MPI_Type_commit(t);
    return true;
  }

  // This rank's node key: the lowest rank of its host (ranks that share memory), or with
  // `ranks_per_node` k > 0 that times the number of ranks plus its host-local rank / k.
  // Also decides whether waits spin: when the ranks on this host are no more than its CPUs.
  int64_t host_key(int64_t ranks_per_node) {
    MPI_Comm shm;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shm);
    int leader = rank_, local = 0, here = 1;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_rank(shm, &local);
    MPI_Comm_size(shm, &here);
    MPI_Comm_free(&shm);
    const unsigned cpus = std::thread::hardware_concurrency();
    wait_.spin = cpus > 0 && static_cast<unsigned>(here) <= cpus;
    const char* y = std::getenv("OMPI_MCA_mpi_yield_when_idle");
    const std::string yv = y ? y : "";
    wait_.mpi_yields = yv == "1" || yv == "true" || yv == "yes";
    const int64_t key = leader;
    return ranks_per_node > 0 ? key * size_ + local / ranks_per_node : key;
  }

  // Ranks with the same key are one node; node ids are numbered by first appearance.
  void compute_nodes(int64_t key) {
    std::vector<int64_t> keys(static_cast<size_t>(size_));
    MPI_Allgather(&key, 1, MPI_INT64_T, keys.data(), 1, MPI_INT64_T, comm_);
    std::map<int64_t, int> ids;
    for (int64_t k : keys)
      if (!ids.count(k)) ids[k] = static_cast<int>(ids.size());
    for (int64_t k : keys) node_.push_back(ids[k]);
  }

  MPI_Comm comm_;
  bool owned_;
  WaitPolicy wait_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> node_;
  MpiNative native_;
};

}  // namespace

Status init_mpi(int* argc, char*** argv) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) {
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED)
      return Status::Precondition("MPI was initialized below MPI_THREAD_SERIALIZED; hvd needs it");
    return Status::OK();
  }
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    return Status::Internal("MPI_Init_thread failed");
  g_we_initialized = true;
  if (provided < MPI_THREAD_SERIALIZED)
    return Status::Precondition("this MPI provides no MPI_THREAD_SERIALIZED support");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return Status::OK();
}

namespace {
void finalize_now() {
  if (!g_we_initialized) return;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
  g_we_initialized = false;
}
}  // namespace

void finalize_mpi() {
  if (!g_finalize_at_exit) finalize_now();
}

bool finalize_mpi_within(double timeout_s) {
  if (!g_we_initialized || g_finalize_at_exit) return true;
  if (timeout_s > 0) {
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    const double deadline = steady_seconds() + timeout_s;
    int done = 0;
    while (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
           steady_seconds() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!done) {  // the barrier completes when the missing rank shuts down too
      g_finalize_at_exit = true;
      std::atexit(finalize_now);
      return false;
    }
  }
  finalize_now();
  return true;
}

std::unique_ptr<Transport> make_mpi_world_transport(int64_t ranks_per_node) {
  return std::make_unique<MpiTransport>(MPI_COMM_WORLD, false, ranks_per_node);
}

void abort_mpi(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

}  // namespace hvd
