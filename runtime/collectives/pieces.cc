#include "collectives/pieces.h"

#include <algorithm>

#include "collectives/collective.h"

namespace hvd {

void PieceBuffer::add(void* data, int64_t count) {
  if (count <= 0) return;
  data_.push_back(data);
  start_.push_back(total_);
  total_ += count;
}

std::vector<IoPiece> PieceBuffer::range(int64_t a, int64_t b) const {
  std::vector<IoPiece> out;
  if (a >= b) return out;
  // First piece whose start is <= a.
  size_t i = static_cast<size_t>(std::upper_bound(start_.begin(), start_.end(), a) - start_.begin()) - 1;
  for (; i < data_.size() && start_[i] < b; ++i) {
    const int64_t end = i + 1 < start_.size() ? start_[i + 1] : total_;
    const int64_t lo = std::max(a, start_[i]), hi = std::min(b, end);
    if (hi > lo)
      out.push_back({offset(data_[i], static_cast<size_t>(lo - start_[i]) * esize_),
                     static_cast<size_t>(hi - lo) * esize_});
  }
  return out;
}

}  // namespace hvd
