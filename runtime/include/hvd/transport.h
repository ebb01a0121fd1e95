// Transport seam: what ranks can say to each other. Real: MPI (or NCCL) point-to-point;
// simulated: SimGrid mailboxes over a modelled network; tests: threads in one process.
//
// The class holds what every backend implements: the group (rank, size, nodes, split,
// name), one send of byte pieces, one receive that learns the message's size when it
// matches, and requests whose wait takes a deadline. What only some backends have is an
// optional capability, a pointer that is null elsewhere: native() (MPI_Allreduce,
// ncclAllReduce, ...), timing() (the simulator's timing-only trains) and blocking() (a
// receive and its wait in one step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd {

class Device;

/// "No deadline" for Request::wait.
inline constexpr double kNoDeadline = std::numeric_limits<double>::infinity();

/// Message tags: collectives and the control plane never share one.
enum Tag : int { kTagControl = 1, kTagData = 2, kTagSplit = 3, kTagLost = 4 };

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

/// The pieces of one message, in order. A view: the caller keeps them alive until the
/// call returns; a backend that needs them longer copies the list.
using IoSpan = std::span<const IoPiece>;

/// Where a message whose size only its sender knows is written: room(n) returns n
/// writable bytes, or null when it cannot take n. Called once, when the message matches.
class SizedSink {
 public:
  virtual void* room(size_t bytes) = 0;

 protected:
  ~SizedSink() = default;
};

/// Where a receive writes its message: scattered into `pieces`, whose total size the
/// message must have, or, when `sink` is set, into sink->room(n) of the n bytes the
/// message brings (MPI learns n with MPI_Improbe). The sink must outlive the request.
struct RecvInto {
  IoSpan pieces;              ///< the receive buffer, in pieces
  SizedSink* sink = nullptr;  ///< or this, for a message of any size
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

/// The ring allreduce as collectives/allreduce_ring_pipelined.h describes it: what a
/// TimingCollectives needs to time one.
struct RingAllreduce {
  void* buf;              ///< in place (phantom: null)
  int64_t count;          ///< elements
  DataType dt;            ///< element type
  ReduceOp op;            ///< reduction
  int64_t segment_bytes;  ///< slices of at most this
  bool lockstep;          ///< the step-synchronous form
  double deadline;        ///< for every wait
};

/// Timing-only collectives, an optional part of a Transport (Transport::timing()). A
/// simulated world that moves no bytes (phantom buffers) has them: it may carry a long
/// sequence of messages to one peer as a few transfers ("trains"), because a later message
/// depends on an earlier one only through time, not through bytes. The simulator's
/// implementation lives in simulator/ (model/timing_ring.cc).
class TimingCollectives {
 public:
  virtual ~TimingCollectives() = default;
  /// Times `a` as trains, with its device work on `dev`, and stores the outcome in *done;
  /// or returns false, having done nothing, where trains would not time it faithfully
  /// (the caller then runs the byte ring).
  virtual bool ring_allreduce(const RingAllreduce& a, Device& dev, Status* done) = 0;
};

class Transport;

/// A receive and its wait in one step, an optional part of a Transport
/// (Transport::blocking()): the simulator posts and waits with one engine call, which the
/// control plane's many small receives notice.
class BlockingReceive {
 public:
  virtual ~BlockingReceive() = default;
  /// Transport::irecv_into() and a wait until platform time `deadline_s`. On a time-out the
  /// receive stays posted and *pending gets it, to wait on further.
  virtual Status recv_until(int peer, const RecvInto& into, int tag, double deadline_s,
                            std::unique_ptr<Request>* pending) = 0;
};

/// Where the members of a group sit: computed once from Transport::node_of.
struct GroupLayout {
  std::vector<int> local_rank;  ///< member -> index among the members on its node
  std::vector<int> local_size;  ///< member -> number of members on its node
  std::vector<int> cross_rank;  ///< member -> index of its node among the group's nodes
  int cross_size = 0;           ///< number of distinct nodes
  bool homogeneous = true;      ///< every node holds the same number of members
  /// The layout of `t`'s group (O(size log size)).
  static GroupLayout of(const Transport& t);
};

/// Point-to-point messaging among the members of one group of ranks. Messages between two
/// members with one tag match in the order they were posted on both sides.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This rank's index in the group.
  virtual int rank() const = 0;
  /// Number of ranks in the group.
  virtual int size() const = 0;
  /// Node (host) index of group member `r`; members with the same node share a machine.
  virtual int node_of(int r) const = 0;
  /// Backend name for logs ("mpi", "local", "simgrid").
  virtual std::string name() const = 0;
  /// Collective over the group: members with equal `color` form a new group, ordered by
  /// (`key`, rank). Every member must call it in the same order. Null if color < 0.
  virtual std::unique_ptr<Transport> split(int color, int key) = 0;
  /// Starts sending the pieces, one after the other, as one message to `peer` (a piece's
  /// data may be null: phantom). The pieces' bytes must stay valid until it completes.
  virtual std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) = 0;
  /// Starts receiving one message from `peer` (RecvInto says where it goes).
  virtual std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) = 0;
  /// The backend's native collectives, or null.
  virtual NativeCollectives* native() { return nullptr; }
  /// Timing-only collectives, or null: every real transport, and a simulated world that
  /// moves bytes, sends each message as its own transfer.
  virtual TimingCollectives* timing() { return nullptr; }
  /// A receive and its wait in one step, or null (then irecv_into and wait).
  virtual BlockingReceive* blocking() { return nullptr; }

  // Shorthands over isendv / irecv_into.
  /// Sends `bytes` at `data` (null: phantom) to `peer`.
  std::unique_ptr<Request> isend(int peer, const void* data, size_t bytes, int tag) {
    const IoPiece p{const_cast<void*>(data), bytes};
    return isendv(peer, IoSpan(&p, 1), tag);
  }
  /// Receives exactly `bytes` from `peer` into `data` (null: phantom).
  std::unique_ptr<Request> irecv(int peer, void* data, size_t bytes, int tag) {
    const IoPiece p{data, bytes};
    return irecv_into(peer, RecvInto{IoSpan(&p, 1)}, tag);
  }
  /// Receives one message from `peer` scattered into the pieces.
  std::unique_ptr<Request> irecvv(int peer, IoSpan pieces, int tag) {
    return irecv_into(peer, RecvInto{pieces}, tag);
  }
  /// Receives a message of any size from `peer` into sink->room(its size).
  std::unique_ptr<Request> irecv_sized(int peer, SizedSink* sink, int tag) {
    return irecv_into(peer, RecvInto{{}, sink}, tag);
  }

  /// This rank's index among the members on its node.
  int local_rank() const { return layout().local_rank[static_cast<size_t>(rank())]; }
  /// Number of members on this rank's node.
  int local_size() const { return layout().local_size[static_cast<size_t>(rank())]; }
  /// Index of this rank's node among the nodes of the group.
  int cross_rank() const { return layout().cross_rank[static_cast<size_t>(rank())]; }
  /// Number of distinct nodes in the group.
  int cross_size() const { return layout().cross_size; }
  /// True when every node holds the same number of members (hierarchical ops need it).
  bool homogeneous() const { return layout().homogeneous; }
  /// The group's layout, computed on first use (or as share_layout() set it).
  const GroupLayout& layout() const;

 protected:
  /// Sets the layout that every transport of this group shares (the simulator's thousands
  /// of ranks would otherwise each scan the group).
  void share_layout(std::shared_ptr<const GroupLayout> l) { layout_ = std::move(l); }

 private:
  mutable std::shared_ptr<const GroupLayout> layout_;
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
/// A receive waited for until platform time `deadline_s`, in one step where the transport
/// can (Transport::blocking()). On a time-out the receive stays posted and *pending gets it.
Status recv_until(Transport& t, int peer, const RecvInto& into, int tag, double deadline_s,
                  std::unique_ptr<Request>* pending);

/// For backends: `pieces` sent as one contiguous message by `send(data, bytes)` (one piece
/// as it is, phantom pieces as one phantom message, otherwise packed into a buffer the
/// returned request owns).
std::unique_ptr<Request> send_packed(IoSpan pieces,
                                     const std::function<std::unique_ptr<Request>(const void*, size_t)>& send);
/// For backends: a receive into `pieces` done by `recv(data, bytes)` into one contiguous
/// buffer and unpacked when it completes (one piece and phantom pieces as they are).
std::unique_ptr<Request> recv_packed(IoSpan pieces,
                                     const std::function<std::unique_ptr<Request>(void*, size_t)>& recv);
/// Total bytes of `pieces`; *phantom tells whether any non-empty piece has no data.
size_t total_bytes(IoSpan pieces, bool* phantom = nullptr);

}  // namespace hvd
