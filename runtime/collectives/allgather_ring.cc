#include "collectives/allgather_ring.h"

#include "collectives/broadcast.h"

namespace hvd {

Status ring_allgatherv(CollectiveContext& c, void* out, const std::vector<size_t>& bytes) {
  const int p = c.t.size();
  const int r = c.t.rank();
  std::vector<size_t> off(bytes.size() + 1, 0);
  for (size_t i = 0; i < bytes.size(); ++i) off[i + 1] = off[i] + bytes[i];
  for (int step = 0; step < p - 1; ++step) {
    const int send_block = (r - step + p) % p;
    const int recv_block = (r - step - 1 + p) % p;
    HVD_RETURN_IF_ERROR(sendrecv(c.t, (r + 1) % p, offset(out, off[send_block]), bytes[send_block],
                                 (r - 1 + p) % p, offset(out, off[recv_block]), bytes[recv_block],
                                 kTagData, c.deadline));
  }
  return Status::OK();
}

Status hierarchical_allgatherv(CollectiveContext& c, Transport& local, Transport& cross, void* out,
                               const std::vector<size_t>& bytes) {
  const int L = local.size();
  const int node = cross.rank();
  // Step 1: gather the node's blocks (ranks node*L .. node*L+L-1) inside the node.
  std::vector<size_t> node_bytes(static_cast<size_t>(cross.size()), 0);
  std::vector<size_t> rank_off(bytes.size() + 1, 0);
  for (size_t i = 0; i < bytes.size(); ++i) rank_off[i + 1] = rank_off[i] + bytes[i];
  for (size_t i = 0; i < bytes.size(); ++i) node_bytes[i / static_cast<size_t>(L)] += bytes[i];
  std::vector<size_t> local_bytes(bytes.begin() + node * L, bytes.begin() + (node + 1) * L);
  CollectiveContext lc{local, c.dev, c.scratch, c.segment_bytes, c.deadline};
  HVD_RETURN_IF_ERROR(
      ring_allgatherv(lc, offset(out, rank_off[static_cast<size_t>(node * L)]), local_bytes));
  // Step 2: the first rank of every node exchanges whole node blocks across nodes.
  if (local.rank() == 0) {
    CollectiveContext xc{cross, c.dev, c.scratch, c.segment_bytes, c.deadline};
    HVD_RETURN_IF_ERROR(ring_allgatherv(xc, out, node_bytes));
  }
  // Step 3: it hands the full result to the rest of its node.
  return tree_broadcast(lc, out, rank_off.back(), 0);
}

}  // namespace hvd
