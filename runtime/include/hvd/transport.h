// Transport seam: what ranks can say to each other. Real: MPI (or NCCL) point-to-point;
// simulated: SimGrid mailboxes over a modelled network; tests: threads in one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd {

/// "No deadline" for Request::wait.
inline constexpr double kNoDeadline = std::numeric_limits<double>::infinity();

/// Message tags: collectives and the control plane never share one.
enum Tag : int { kTagControl = 1, kTagData = 2, kTagSplit = 3 };

/// An outstanding send or receive.
class Request {
 public:
  virtual ~Request() = default;
  /// True once the transfer has completed (does not block).
  virtual bool test() = 0;
  /// Blocks until completion or until platform time `deadline_s` (then kTimeout).
  virtual Status wait(double deadline_s = kNoDeadline) = 0;
};

/// A request that is already complete with `s` (e.g. an eager send, or a transfer a
/// backend finished while posting it).
std::unique_ptr<Request> completed_request(Status s = Status::OK());

/// One piece of a gathered send or scattered receive.
struct IoPiece {
  void* data;    ///< start (null: phantom)
  size_t bytes;  ///< length
};

/// Collectives a backend implements natively (MPI_Allreduce, ncclAllReduce, ...).
/// Each may return kInvalidArgument for a case it does not handle (the caller falls back).
class NativeCollectives {
 public:
  virtual ~NativeCollectives() = default;
  /// Backend name used in timeline activity names ("MPI", "NCCL").
  virtual std::string prefix() const = 0;
  /// Whether reductions of `dt` are supported (MPI has no half types).
  virtual bool supports(DataType dt) const {
    return dt != DataType::kFloat16 && dt != DataType::kBFloat16;
  }
  /// Whether "auto" should pick these collectives for tensors on `device` (NCCL: GPUs).
  virtual bool preferred(DeviceKind device) const { (void)device; return false; }
  /// In-place allreduce of `count` elements (op is sum/min/max/product; never average).
  virtual Status allreduce(void* buf, int64_t count, DataType dt, ReduceOp op) = 0;
  /// Concatenates each rank's `in` (bytes[r] bytes from rank r) into `out`.
  virtual Status allgatherv(const void* in, void* out, const std::vector<size_t>& bytes) = 0;
  /// Broadcasts `bytes` bytes of `buf` from `root`.
  virtual Status broadcast(void* buf, size_t bytes, int root) = 0;
  /// Sends send_bytes[r] bytes to rank r and receives recv_bytes[r] from it (contiguous).
  virtual Status alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                           const std::vector<size_t>& recv_bytes) = 0;
  /// Reduces `in` across ranks and leaves block r (counts[r] elements) on rank r in `out`.
  virtual Status reducescatter(const void* in, void* out, const std::vector<int64_t>& counts,
                               DataType dt, ReduceOp op) = 0;
  /// Blocks until every rank has entered.
  virtual Status barrier() = 0;
};

/// Timing-only trains, an optional part of a Transport (Transport::timing()). A simulated
/// world that moves no bytes (phantom buffers) has them: a collective may then carry a long
/// sequence of messages to one peer as about transfers() transfers ("trains"), because a
/// later message depends on an earlier one only through time, not through bytes. SimGrid
/// still moves every train as a flow sharing the links of its route. Peers and members are
/// ranks of the transport's group.
class TimingTrains {
 public:
  virtual ~TimingTrains() = default;
  /// N > 0: a long sequence of messages to one peer may go as about N transfers.
  virtual int64_t transfers() const = 0;
  /// Time one message of `bytes` takes from member `from` to member `to` on an idle
  /// network: latency plus bytes over the route's bottleneck bandwidth. Lets a train
  /// account for the hops its later messages took.
  virtual double hop(int from, int to, size_t bytes) = 0;
  /// Sum of hop(x-1, x, bytes) over the members x = first, first+1, ..., first+count-1
  /// (modulo the group size): the ring hops into them.
  virtual double ring_hops(int first, int64_t count, size_t bytes) = 0;
  /// The slowest of the ring hops hop(x-1, x, bytes) over all members x: the pace of a
  /// step-synchronous ring.
  virtual double ring_max_hop(size_t bytes) = 0;
  /// Sends `bytes` of phantom data to `peer` as one transfer (a train of messages).
  virtual std::unique_ptr<Request> isend_train(int peer, size_t bytes, int tag) = 0;
  /// The receiving side of isend_train. The train's messages left the sender one by one as
  /// they became ready there, so its last message arrives no earlier than `path_s` after
  /// the transfer started (nor before the transfer's bytes are in): the request completes
  /// at the later of the two.
  virtual std::unique_ptr<Request> irecv_train(int peer, size_t bytes, double path_s, int tag) = 0;
};

/// Where a message whose size only its sender knows is written (Transport::isend_sized):
/// room(n) returns n writable bytes, or null when it cannot take n.
class SizedSink {
 public:
  virtual void* room(size_t bytes) = 0;

 protected:
  ~SizedSink() = default;
};

/// Point-to-point messaging among the members of one group of ranks.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This rank's index in the group.
  virtual int rank() const = 0;
  /// Number of ranks in the group.
  virtual int size() const = 0;
  /// Node (host) index of group member `r`; members with the same node share a machine.
  virtual int node_of(int r) const = 0;
  /// Starts sending `bytes` bytes at `data` (may be null for phantom buffers) to `peer`.
  virtual std::unique_ptr<Request> isend(int peer, const void* data, size_t bytes, int tag) = 0;
  /// Starts receiving `bytes` bytes from `peer` into `data` (may be null: phantom).
  virtual std::unique_ptr<Request> irecv(int peer, void* data, size_t bytes, int tag) = 0;
  /// Sends the pieces as one message (the peer may receive it contiguously or scattered).
  /// The default packs into a temporary buffer; backends may send without copying.
  virtual std::unique_ptr<Request> isendv(int peer, const std::vector<IoPiece>& pieces, int tag);
  /// Receives one message scattered into the pieces (default: unpack on completion).
  virtual std::unique_ptr<Request> irecvv(int peer, const std::vector<IoPiece>& pieces, int tag);
  /// Receives `bytes` from `peer` into `data`, waiting until platform time `deadline_s`:
  /// irecv() then wait(), which is the default; a backend may do both in one step (the
  /// simulator: one engine call instead of two, per control message). On a time-out the
  /// receive stays posted and *pending gets it, to wait on further.
  virtual Status recv_until(int peer, void* data, size_t bytes, int tag, double deadline_s,
                            std::unique_ptr<Request>* pending);
  /// Sends `bytes` as one message whose size the receiver learns from the message itself
  /// (irecv_sized, recv_sized_until), as an MPI receiver does with MPI_Probe. The default
  /// sends a fixed-size message of kSizedHead bytes (the size, then the first bytes) and,
  /// only when the bytes do not fit there, a second one with the rest. A backend that
  /// matches messages itself sends exactly `bytes` in one message (the simulator).
  virtual std::unique_ptr<Request> isend_sized(int peer, const void* data, size_t bytes, int tag);
  /// isend_sized() of the pieces' concatenation, one message. The default packs them into a
  /// buffer the request owns; a backend that copies at matching time copies the pieces
  /// straight into the receiver's buffer (the simulator). The pieces must stay valid until
  /// the request completes.
  virtual std::unique_ptr<Request> isend_sized_v(int peer, const std::vector<IoPiece>& pieces, int tag);
  /// Receives a message sent with isend_sized() into sink->room(its size); the sink must
  /// outlive the request.
  virtual std::unique_ptr<Request> irecv_sized(int peer, SizedSink* sink, int tag);
  /// irecv_sized() and a wait until platform time `deadline_s` (one step where the backend
  /// can, like recv_until). On a time-out the receive stays posted and *pending gets it.
  virtual Status recv_sized_until(int peer, SizedSink* sink, int tag, double deadline_s,
                                  std::unique_ptr<Request>* pending);
  /// The first message of the default isend_sized(): an 8-byte size, then up to
  /// kSizedHead - 8 bytes of the message.
  static constexpr size_t kSizedHead = 1024;
  /// Collective over the group: members with equal `color` form a new group, ordered by
  /// (`key`, rank). Every member must call it in the same order. Null if color < 0.
  virtual std::unique_ptr<Transport> split(int color, int key) = 0;
  /// Timing-only trains (TimingTrains), or null: every real transport, and a simulated
  /// world that moves bytes, sends each message as its own transfer.
  virtual TimingTrains* timing() { return nullptr; }
  /// The backend's native collectives, or null.
  virtual NativeCollectives* native() { return nullptr; }
  /// Backend name for logs ("mpi", "local", "simgrid").
  virtual std::string name() const = 0;

  // The layout queries below scan the group (O(size) each); a transport whose layout is
  // fixed may answer them from a cache (the simulator's do: thousands of ranks ask).
  /// This rank's index among the members on its node.
  virtual int local_rank() const;
  /// Number of members on this rank's node.
  virtual int local_size() const;
  /// Index of this rank's node among the nodes of the group.
  virtual int cross_rank() const;
  /// Number of distinct nodes in the group.
  virtual int cross_size() const;
  /// True when every node holds the same number of members (hierarchical ops need it).
  virtual bool homogeneous() const;
};

/// Blocking send helper.
Status send(Transport& t, int peer, const void* data, size_t bytes, int tag,
            double deadline_s = kNoDeadline);
/// Blocking receive helper.
Status recv(Transport& t, int peer, void* data, size_t bytes, int tag,
            double deadline_s = kNoDeadline);
/// Simultaneous send to `to` and receive from `from` (deadlock-free exchange).
Status sendrecv(Transport& t, int to, const void* sdata, size_t sbytes, int from, void* rdata,
                size_t rbytes, int tag, double deadline_s = kNoDeadline);

}  // namespace hvd
