// The negotiation's wires: gather to the coordinator, broadcast from it, and an
// AND/OR allreduce of bit vectors (the response-cache fast path), all on binomial trees
// over the Transport so the cost grows as log(p). Receives honour the stall deadlines.
#pragma once

#include <cstdint>
#include <functional>
#include <array>
#include <map>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "core/logging.h"
#include "hvd/platform.h"
#include "hvd/status.h"
#include "hvd/transport.h"

namespace hvd {

/// An allocator whose resize() leaves new elements uninitialised (default-initialised):
/// for buffers that are received into straight after they grow.
template <class T>
struct UninitAlloc : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAlloc<U>;
  };
  UninitAlloc() = default;
  template <class U>
  UninitAlloc(const UninitAlloc<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using ByteBuffer = std::vector<uint8_t, UninitAlloc<uint8_t>>;

/// What gather() collects on rank 0: every rank's bytes where they arrived (rank 0's own,
/// then each child's blob of its subtree's records; not copied once more into a vector per
/// rank: at thousands of ranks a busy cycle's requests are tens of MB). It points into the
/// ControlPlane's buffers: valid until the next gather() on the same ControlPlane.
class Gathered {
 public:
  /// Ranks gathered (0 off rank 0).
  int ranks() const { return static_cast<int>(spans_.size()); }
  /// Rank r's bytes and their length.
  const uint8_t* data(int r) const { return spans_[static_cast<size_t>(r)].first; }
  size_t length(int r) const { return spans_[static_cast<size_t>(r)].second; }

 private:
  friend class ControlPlane;
  std::vector<std::pair<const uint8_t*, size_t>> spans_;  // per rank: start, length
};

/// Data that rides on the bit exchange of ControlPlane::allreduce_bits (the eager small
/// allreduce): bit b of the AND vector (word 1 + b / 64, bit b % 64; word 0 holds flags)
/// stands for a segment of bytes_of(b) bytes, and a rank whose AND vector has `flag` set in
/// word 0 sends the segments of its set bits, in bit order, behind its bits. Where both
/// sides of an exchange attached theirs, the segments of the bits both hold are reduced
/// with reduce(); once a side has none, the flag is gone from the AND and so is the data.
struct BitsPayload {
  uint64_t flag = 0;  ///< word-0 bit: "segments attached"
  /// In: this rank's segments for its AND bits; out, where the flag survived on every rank:
  /// the reduced segments of the final AND bits, in bit order.
  ByteBuffer data;
  std::function<size_t(int bit)> bytes_of;
  std::function<void(void* dst, const void* mine, const void* theirs, int bit)> reduce;
};

/// Control-message collectives of one process set (coordinator = rank 0 of the set).
class ControlPlane {
 public:
  /// `warn_s`: log after waiting this long for a peer; `shutdown_s` > 0: give up then.
  ControlPlane(Transport& t, Platform& p, const Logger& log, double warn_s, double shutdown_s);
  /// Collects every rank's bytes on rank 0; the others get an empty Gathered.
  StatusOr<Gathered> gather(std::vector<uint8_t> mine);
  /// Sends rank 0's `data` to every rank.
  Status bcast(std::vector<uint8_t>* data);
  /// Element-wise AND of `and_bits` and OR of `or_bits` over all ranks, result everywhere
  /// (recursive doubling: log2(p) exchange rounds).
  /// Both vectors must have the same lengths on every rank.
  /// With `payload`, every rank must pass one (its data may be empty, its flag unset): the
  /// messages are then of any size, bits first, the segments behind them.
  Status allreduce_bits(std::vector<uint64_t>* and_bits, std::vector<uint64_t>* or_bits,
                        BitsPayload* payload = nullptr);
  /// A transfer of this set's data with `peer` failed with `why` (a time-out): tells every
  /// rank which rank is gone and names the rank really gone, as the negotiation's waits do
  /// (a live peer that itself waited for a dead rank sends its notice within a short grace).
  Status name_gone(const Status& why, int peer);

 private:
  /// Receives a blob and appends it to `out`.
  template <class Buffer>
  Status recv_blob(int peer, Buffer* out);
  Status send_blob(int peer, const uint8_t* data, size_t size);
  /// Waits for `req`, warning every warn_s and giving up at shutdown_s after `start`
  /// (platform time; < 0: now).
  Status wait(Request& req, int peer, const char* what, double start = -1);
  /// Platform time until which a receive started at `start` waits before its first warning.
  double first_deadline(double start) const;
  /// Receives from `peer` with the same warnings and give-up time as wait().
  Status recv(int peer, void* data, size_t bytes, const char* what);
  std::vector<int> children() const;
  int parent() const;
  /// The rank really gone when `peer` did not answer: a rank that gave up on another one
  /// tells every rank which (kTagLost) before it stops, so that a survivor waiting on it
  /// blames the lost rank, not the live one that waited for it. Waits
  /// up to `grace` seconds for that notice from `peer`; `peer` itself when none comes.
  int lost_behind(int peer, double grace);
  /// Tells every other rank of the set that `lost` is gone (once; never waited for).
  void announce_lost(int lost);

  Transport& t_;
  Platform& p_;
  const Logger& log_;
  double warn_s_;
  double shutdown_s_;
  /// gather()'s pieces, held until the next gather(): this rank's record head (its rank and
  /// length) and bytes, and each child's blob as it arrived (its subtree's records). They
  /// go up as one message without being concatenated (Transport::isendv); on rank 0
  /// Gathered points into them. A child's buffer is kept from one cycle to the next up to
  /// kKeepGatherBytes (control_plane.cc).
  std::array<uint8_t, 12> head_{};
  std::vector<uint8_t> mine_;
  std::vector<ByteBuffer> kids_;
  /// allreduce_bits' messages with payloads: what arrived, and the next running data.
  ByteBuffer bits_in_, bits_next_, bits_out_;
  std::vector<uint64_t> bits_mine_, bits_theirs_;  ///< allreduce_bits' running and received bits
  int32_t lost_ = -1;                               ///< the rank this one announced as gone
  std::map<int, int> lost_by_;                      ///< peer -> the rank its notice named
  std::vector<std::unique_ptr<Request>> notices_;   ///< its notices in flight
};

}  // namespace hvd
