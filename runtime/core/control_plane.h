// The negotiation's wires: gather to the coordinator, broadcast from it, and an
// AND/OR allreduce of bit vectors (the response-cache fast path), all on binomial trees
// over the Transport so the cost grows as log(p). Receives honour the stall deadlines.
#pragma once

#include <cstdint>
#include <vector>

#include "core/logging.h"
#include "hvd/platform.h"
#include "hvd/status.h"
#include "hvd/transport.h"

namespace hvd {

/// What gather() collects on rank 0: every rank's bytes in one buffer (as they arrived,
/// not copied once more into a vector per rank: at thousands of ranks a busy cycle's
/// requests are tens of MB).
class Gathered {
 public:
  /// Ranks gathered (0 off rank 0).
  int ranks() const { return static_cast<int>(spans_.size()); }
  /// Rank r's bytes and their length.
  const uint8_t* data(int r) const { return bytes_.data() + spans_[static_cast<size_t>(r)].first; }
  size_t length(int r) const { return spans_[static_cast<size_t>(r)].second; }

 private:
  friend class ControlPlane;
  std::vector<uint8_t> bytes_;
  std::vector<std::pair<size_t, size_t>> spans_;  // per rank: offset into bytes_, length
};

/// Control-message collectives of one process set (coordinator = rank 0 of the set).
class ControlPlane {
 public:
  /// `warn_s`: log after waiting this long for a peer; `shutdown_s` > 0: give up then.
  ControlPlane(Transport& t, Platform& p, const Logger& log, double warn_s, double shutdown_s);
  /// Collects every rank's bytes on rank 0; the others get an empty Gathered.
  StatusOr<Gathered> gather(const std::vector<uint8_t>& mine);
  /// Sends rank 0's `data` to every rank.
  Status bcast(std::vector<uint8_t>* data);
  /// Element-wise AND of `and_bits` and OR of `or_bits` over all ranks, result everywhere
  /// (recursive doubling: log2(p) exchange rounds).
  /// Both vectors must have the same lengths on every rank.
  Status allreduce_bits(std::vector<uint64_t>* and_bits, std::vector<uint64_t>* or_bits);

 private:
  /// Receives a blob and appends it to `out`.
  Status recv_blob(int peer, std::vector<uint8_t>* out);
  Status send_blob(int peer, const std::vector<uint8_t>& data);
  Status wait(Request& req, int peer, const char* what);
  std::vector<int> children() const;
  int parent() const;

  Transport& t_;
  Platform& p_;
  const Logger& log_;
  double warn_s_;
  double shutdown_s_;
};

}  // namespace hvd
