#include "collectives/allreduce_rhd.h"

namespace hvd {

namespace {

struct Range {
  int64_t lo, hi;
};

// Real rank of the participant numbered `v` among the power-of-two group.
int real_rank(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

}  // namespace

Status rhd_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt, ReduceOp op) {
  const PieceBuffer b(buf, count, dtype_size(dt));
  return rhd_allreduce(c, b, b, dt, op);
}

Status rhd_allreduce(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out,
                     DataType dt, ReduceOp op) {
  const int p = c.t.size();
  const int r = c.t.rank();
  const int64_t count = out.count();
  const bool separate = &in != &out;  // in place: `out` holds this rank's data from the start
  if (count == 0) return Status::OK();
  if (p == 1) {
    if (separate) copy_pieces(c, in, out);
    return Status::OK();
  }
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  const int rem = p - p2;
  // Sends and receives of whole ranges of `out` (empty ranges move nothing on both sides).
  auto swap = [&](int partner, Range send_r, Range recv_r) -> Status {
    std::unique_ptr<Request> rq, sq;
    if (recv_r.hi > recv_r.lo) rq = c.t.irecvv(partner, out.range(recv_r.lo, recv_r.hi), kTagData);
    if (send_r.hi > send_r.lo) sq = c.t.isendv(partner, out.range(send_r.lo, send_r.hi), kTagData);
    Status s = rq ? rq->wait(c.deadline) : Status::OK();
    Status t = sq ? sq->wait(c.deadline) : Status::OK();
    return s.ok() ? t : s;
  };
  // Fold: among the first 2·rem ranks, even ones hand their data to the odd neighbour and
  // get the result back at the end. Out of place, until this rank has reduced once its
  // data is still in `in` and `out` holds nothing.
  bool fresh = separate;
  const int v = r >= 2 * rem ? r - rem : (r % 2 ? r / 2 : -1);
  if (r < 2 * rem && r % 2 == 0) {
    HVD_RETURN_IF_ERROR(send_recv_reduce(c, r + 1, in, 0, count, r + 1, out, 0, 0, dt, op));
  } else if (r < 2 * rem) {
    HVD_RETURN_IF_ERROR(send_recv_reduce(c, r - 1, in, 0, 0, r - 1, out, 0, count, dt, op,
                                         separate ? &in : nullptr));
    fresh = false;
  }
  if (v >= 0) {
    // Recursive halving: keep half of the current range, reduce the partner's copy of it.
    std::vector<Range> history;
    Range cur{0, count};
    for (int mask = p2 / 2; mask >= 1; mask /= 2) {
      const int partner = real_rank(v ^ mask, rem);
      const int64_t mid = cur.lo + (cur.hi - cur.lo) / 2;
      const bool lower = (v & mask) == 0;
      Range keep = lower ? Range{cur.lo, mid} : Range{mid, cur.hi};
      Range give = lower ? Range{mid, cur.hi} : Range{cur.lo, mid};
      HVD_RETURN_IF_ERROR(send_recv_reduce(c, partner, fresh ? in : out, give.lo, give.hi, partner,
                                           out, keep.lo, keep.hi, dt, op, fresh ? &in : nullptr));
      fresh = false;
      history.push_back(cur);
      cur = keep;
    }
    // Recursive doubling: swap reduced halves back up the same tree.
    for (int mask = 1; mask < p2; mask *= 2) {
      const int partner = real_rank(v ^ mask, rem);
      const Range parent = history.back();
      history.pop_back();
      const Range other = cur.lo == parent.lo ? Range{cur.hi, parent.hi} : Range{parent.lo, cur.lo};
      HVD_RETURN_IF_ERROR(swap(partner, cur, other));
      cur = parent;
    }
  }
  // Unfold: odd ranks return the result to the even ranks that sat out.
  if (r < 2 * rem && r % 2 == 0) return swap(r + 1, Range{0, 0}, Range{0, count});
  if (r < 2 * rem) return swap(r - 1, Range{0, count}, Range{0, 0});
  return Status::OK();
}

}  // namespace hvd
