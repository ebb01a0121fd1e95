#include <map>
#include <set>

#include "hvd/transport.h"

namespace hvd {

int Transport::local_rank() const {
  int me = node_of(rank());
  int n = 0;
  for (int r = 0; r < rank(); ++r) n += node_of(r) == me;
  return n;
}

int Transport::local_size() const {
  int me = node_of(rank());
  int n = 0;
  for (int r = 0; r < size(); ++r) n += node_of(r) == me;
  return n;
}

int Transport::cross_rank() const {
  std::set<int> before;
  int me = node_of(rank());
  for (int r = 0; r < size(); ++r)
    if (node_of(r) < me) before.insert(node_of(r));
  return static_cast<int>(before.size());
}

int Transport::cross_size() const {
  std::set<int> nodes;
  for (int r = 0; r < size(); ++r) nodes.insert(node_of(r));
  return static_cast<int>(nodes.size());
}

bool Transport::homogeneous() const {
  std::map<int, int> count;
  for (int r = 0; r < size(); ++r) ++count[node_of(r)];
  for (const auto& [node, n] : count)
    if (n != count.begin()->second) return false;
  return true;
}

Status send(Transport& t, int peer, const void* data, size_t bytes, int tag, double deadline) {
  if (bytes == 0) return Status::OK();
  return t.isend(peer, data, bytes, tag)->wait(deadline);
}

Status recv(Transport& t, int peer, void* data, size_t bytes, int tag, double deadline) {
  if (bytes == 0) return Status::OK();
  return t.irecv(peer, data, bytes, tag)->wait(deadline);
}

Status sendrecv(Transport& t, int to, const void* sdata, size_t sbytes, int from, void* rdata,
                size_t rbytes, int tag, double deadline) {
  std::unique_ptr<Request> r, s;
  if (rbytes) r = t.irecv(from, rdata, rbytes, tag);
  if (sbytes) s = t.isend(to, sdata, sbytes, tag);
  Status st;
  if (r) st = r->wait(deadline);
  if (s) {
    Status ss = s->wait(deadline);
    if (st.ok()) st = ss;
  }
  return st;
}

}  // namespace hvd
