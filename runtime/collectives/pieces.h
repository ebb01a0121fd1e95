// PieceBuffer: one logical buffer made of several tensors' memory, so a fused allreduce
// can run the ring directly over the tensors (no copy into a fusion buffer and back). The
// layout is identical on every rank (same tensors, same order), so a range of the logical
// buffer maps to the same pieces everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "hvd/transport.h"

namespace hvd {

/// A logical buffer of elements spread over pieces of memory.
class PieceBuffer {
 public:
  PieceBuffer() = default;
  /// One contiguous buffer of `count` elements of `esize` bytes.
  PieceBuffer(void* data, int64_t count, size_t esize) : esize_(esize) { add(data, count); }
  /// An empty buffer of elements of `esize` bytes.
  explicit PieceBuffer(size_t esize) : esize_(esize) {}
  /// Appends `count` elements at `data` (null: phantom).
  void add(void* data, int64_t count);
  /// Total elements.
  int64_t count() const { return total_; }
  /// Bytes per element.
  size_t esize() const { return esize_; }
  /// The memory pieces covering elements [a, b), in order.
  std::vector<IoPiece> range(int64_t a, int64_t b) const;
  /// Calls fn(ptr, offset_in_range, n) for each piece of [a, b).
  template <class Fn>
  void for_each(int64_t a, int64_t b, Fn&& fn) const {
    int64_t done = 0;
    for (const IoPiece& p : range(a, b)) {
      const int64_t n = static_cast<int64_t>(p.bytes / esize_);
      fn(p.data, done, n);
      done += n;
    }
  }

 private:
  size_t esize_ = 1;
  std::vector<void*> data_;
  std::vector<int64_t> start_;  // first element of each piece
  int64_t total_ = 0;
};

}  // namespace hvd
