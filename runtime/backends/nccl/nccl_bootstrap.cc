#include "backends/nccl/nccl_bootstrap.h"

#include <string>

namespace hvd::nccl {
namespace {

Status send_frame(Transport& t, int peer, const BootstrapMessage& m) {
  const std::vector<uint8_t> f = encode_bootstrap(m);
  return send(t, peer, f.data(), f.size(), kTagSplit);
}

// Receives one frame. A frame that does not decode (wrong generation: the ranks split in
// different orders; corruption) becomes a failure message, so the protocol still runs to
// its end on every rank and all of them fail instead of some waiting forever.
Status recv_frame(Transport& t, int peer, uint64_t generation, BootstrapMessage* m) {
  std::vector<uint8_t> f(kBootstrapFrameBytes);
  HVD_RETURN_IF_ERROR(recv(t, peer, f.data(), f.size(), kTagSplit));
  Status s = decode_bootstrap(f, generation, m);
  if (!s.ok()) {
    *m = BootstrapMessage{};
    m->generation = generation;
    m->ok = false;
    m->error = "rank " + std::to_string(t.rank()) + " (from rank " + std::to_string(peer) +
               "): " + s.message();
  }
  return Status::OK();
}

}  // namespace

Status share_unique_id(Transport& t, uint64_t generation, const Status& local,
                       const std::function<Status(UniqueIdBytes*)>& make_id, UniqueIdBytes* id) {
  const TreeLinks links = bootstrap_tree(t.rank(), t.size());
  BootstrapMessage up;
  up.generation = generation;
  up.ok = local.ok();
  if (!local.ok()) up.error = "rank " + std::to_string(t.rank()) + ": " + local.message();
  // Up: a subtree reports the first failure it saw (its own, else a child's).
  for (int c : links.children) {
    BootstrapMessage m;
    HVD_RETURN_IF_ERROR(recv_frame(t, c, generation, &m));
    if (!m.ok && up.ok) {
      up.ok = false;
      up.error = m.error;
    }
  }
  BootstrapMessage down;
  if (links.parent >= 0) {
    Status s = send_frame(t, links.parent, up);
    if (s.ok()) s = recv_frame(t, links.parent, generation, &down);
    if (!s.ok()) return s;
  } else {
    down = up;
    if (down.ok && make_id) {
      Status s = make_id(&down.id);
      if (!s.ok()) {
        down.ok = false;
        down.error = "rank 0: " + s.message();
      }
    }
  }
  for (int c : links.children) {
    HVD_RETURN_IF_ERROR(send_frame(t, c, down));
  }
  if (!down.ok) return Status::Internal("NCCL communicator set-up failed on " + down.error);
  if (id) *id = down.id;
  return Status::OK();
}

Status agree(Transport& t, uint64_t generation, const Status& local) {
  return share_unique_id(t, generation, local, nullptr, nullptr);
}

}  // namespace hvd::nccl
