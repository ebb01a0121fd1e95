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

/// Control-message collectives of one process set (coordinator = rank 0 of the set).
class ControlPlane {
 public:
  /// `warn_s`: log after waiting this long for a peer; `shutdown_s` > 0: give up then.
  ControlPlane(Transport& t, Platform& p, const Logger& log, double warn_s, double shutdown_s);
  /// Collects every rank's bytes on rank 0 (in rank order); others get `all` cleared.
  Status gather(const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all);
  /// Sends rank 0's `data` to every rank.
  Status bcast(std::vector<uint8_t>* data);
  /// Element-wise AND of `and_bits` and OR of `or_bits` over all ranks, result everywhere
  /// (recursive doubling: log2(p) exchange rounds).
  /// Both vectors must have the same lengths on every rank.
  Status allreduce_bits(std::vector<uint64_t>* and_bits, std::vector<uint64_t>* or_bits);

 private:
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
