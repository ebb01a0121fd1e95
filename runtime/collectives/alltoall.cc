#include "collectives/alltoall.h"

namespace hvd {

namespace {
std::vector<size_t> prefix(const std::vector<size_t>& v) {
  std::vector<size_t> off(v.size() + 1, 0);
  for (size_t i = 0; i < v.size(); ++i) off[i + 1] = off[i] + v[i];
  return off;
}
}  // namespace

StatusOr<std::vector<int64_t>> exchange_counts(CollectiveContext& c,
                                               const std::vector<int64_t>& send_counts) {
  const int p = c.t.size();
  const int r = c.t.rank();
  std::vector<int64_t> recv_counts(static_cast<size_t>(p), 0);
  recv_counts[static_cast<size_t>(r)] = send_counts[static_cast<size_t>(r)];
  for (int s = 1; s < p; ++s) {
    const int to = (r + s) % p;
    const int from = (r - s + p) % p;
    HVD_RETURN_IF_ERROR(sendrecv(c.t, to, &send_counts[static_cast<size_t>(to)], sizeof(int64_t),
                                 from, &recv_counts[static_cast<size_t>(from)], sizeof(int64_t),
                                 kTagData, c.deadline));
  }
  return recv_counts;
}

Status pairwise_alltoallv(CollectiveContext& c, const void* in,
                          const std::vector<size_t>& send_bytes, void* out,
                          const std::vector<size_t>& recv_bytes) {
  const int p = c.t.size();
  const int r = c.t.rank();
  const std::vector<size_t> soff = prefix(send_bytes);
  const std::vector<size_t> roff = prefix(recv_bytes);
  const auto me = static_cast<size_t>(r);
  if (send_bytes[me]) c.dev.copy(offset(out, roff[me]), offset(in, soff[me]), send_bytes[me]);
  for (int s = 1; s < p; ++s) {
    const auto to = static_cast<size_t>((r + s) % p);
    const auto from = static_cast<size_t>((r - s + p) % p);
    HVD_RETURN_IF_ERROR(sendrecv(c.t, static_cast<int>(to), offset(in, soff[to]), send_bytes[to],
                                 static_cast<int>(from), offset(out, roff[from]), recv_bytes[from],
                                 kTagData, c.deadline));
  }
  return Status::OK();
}

}  // namespace hvd
