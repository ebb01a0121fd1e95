#include "backends/tcp/tcp_fabric.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace hvd::tcp {

namespace {

constexpr uint32_t kMagic = 0x48564454;  // "HVDT"

struct Header {
  uint64_t group;
  int32_t tag;
  uint32_t magic;
  uint64_t bytes;
};
static_assert(sizeof(Header) == 24);

std::chrono::steady_clock::time_point to_time_point(double s) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s)));
}

// Where a matched receive of an n-byte message writes it: the sink's room, or the pieces
// when their total is n; else an error (the message is then read and dropped).
Status target_of(Op& op, size_t n) {
  if (op.sink) {
    void* dst = op.sink->room(n);
    if (n && !dst) return Status::Internal("no room for a message of " + std::to_string(n) + " bytes");
    op.pieces.assign(1, IoPiece{dst, n});
    op.bytes = n;
    return Status::OK();
  }
  if (n != op.bytes)
    return Status::Internal("message size mismatch: the receive expects " + std::to_string(op.bytes) +
                            " bytes, the message has " + std::to_string(n));
  return Status::OK();
}

// Copies a buffered message into a receive.
Status deliver(Op& op, const std::vector<char>& msg) {
  HVD_RETURN_IF_ERROR(target_of(op, msg.size()));
  size_t off = 0;
  for (const IoPiece& p : op.pieces) {
    if (p.data && p.bytes) std::memcpy(p.data, msg.data() + off, p.bytes);
    off += p.bytes;
  }
  return Status::OK();
}

// Reads n bytes into the pieces (null pieces: dropped).
Status read_pieces(int fd, const std::vector<IoPiece>& pieces, size_t n) {
  static thread_local std::vector<char> scratch(1 << 16);
  size_t got = 0;
  for (const IoPiece& p : pieces) {
    for (size_t o = 0; o < p.bytes && got < n;) {
      const size_t k = p.data ? std::min(p.bytes - o, n - got) : std::min({p.bytes - o, n - got, scratch.size()});
      HVD_RETURN_IF_ERROR(read_all(fd, p.data ? static_cast<char*>(p.data) + o : scratch.data(), k, kNoDeadline));
      o += k;
      got += k;
    }
  }
  while (got < n) {  // dropped (size mismatch or no room)
    const size_t k = std::min(n - got, scratch.size());
    HVD_RETURN_IF_ERROR(read_all(fd, scratch.data(), k, kNoDeadline));
    got += k;
  }
  return Status::OK();
}

}  // namespace

Fabric::Fabric(int rank, std::vector<Fd> fds, std::vector<std::string> names) : rank_(rank), peers_(fds.size()) {
  for (size_t q = 0; q < fds.size(); ++q) {
    peers_[q].fd = std::move(fds[q]);
    peers_[q].name = names[q];
  }
  for (size_t q = 0; q < peers_.size(); ++q) {
    if (static_cast<int>(q) == rank_) continue;
    peers_[q].reader = std::thread([this, q] { reader_loop(static_cast<int>(q)); });
    peers_[q].sender = std::thread([this, q] { sender_loop(static_cast<int>(q)); });
  }
}

Fabric::~Fabric() { close_all(); }

// Lets queued sends go out (up to 10 s), says goodbye (FIN), waits up to 5 s for every
// peer's, then cuts what is left and joins the threads.
void Fabric::close_all() {
  std::unique_lock<std::mutex> lk(mu_);
  auto sends_done = [&] {
    for (const Peer& p : peers_)
      if (!p.sendq.empty()) return false;
    return true;
  };
  if (!done_cv_.wait_until(lk, to_time_point(now_s() + 10), sends_done)) {
    for (Peer& p : peers_)  // a peer that stopped reading: cut the sends still blocked
      if (!p.sendq.empty() && p.fd.valid()) ::shutdown(p.fd.get(), SHUT_RDWR);
  }
  stop_ = true;
  send_cv_.notify_all();
  lk.unlock();
  for (Peer& p : peers_)
    if (p.sender.joinable()) p.sender.join();  // exits once its current send is written
  for (Peer& p : peers_)
    if (p.fd.valid()) ::shutdown(p.fd.get(), SHUT_WR);
  lk.lock();
  done_cv_.wait_until(lk, to_time_point(now_s() + 5), [&] {
    for (size_t q = 0; q < peers_.size(); ++q)
      if (static_cast<int>(q) != rank_ && !peers_[q].eof) return false;
    return true;
  });
  lk.unlock();
  for (Peer& p : peers_)
    if (p.fd.valid()) ::shutdown(p.fd.get(), SHUT_RDWR);
  for (Peer& p : peers_)
    if (p.reader.joinable()) p.reader.join();
}

std::string Fabric::describe(const Op& op) const {
  return std::string(op.send ? "sending " : "receiving ") + std::to_string(op.bytes) + " bytes " +
         (op.send ? "to" : "from") + " rank " + std::to_string(op.peer) + " (" +
         peers_[static_cast<size_t>(op.peer)].name + ", tag " + std::to_string(op.tag) + ")";
}

// Messages up to this size are written by the thread that posts them when nothing is
// queued before them (post_send); larger ones, and any behind a queue, go to the sender.
constexpr size_t kInlineSendBytes = 64 << 10;

void Fabric::finish(Op& op, Status s) {
  op.state = Op::State::kDone;
  op.status = std::move(s);
  done_cv_.notify_all();
}

std::shared_ptr<Op> Fabric::post_send(int peer, uint64_t group, int tag, IoSpan pieces) {
  auto op = std::make_shared<Op>();
  op->pieces.assign(pieces.begin(), pieces.end());
  op->bytes = total_bytes(pieces);
  op->group = group;
  op->tag = tag;
  op->peer = peer;
  op->send = true;
  if (peer == rank_) {
    self_send(op);
    return op;
  }
  std::unique_lock<std::mutex> lk(mu_);
  Peer& p = peers_[static_cast<size_t>(peer)];
  if (!p.lost.ok()) {
    finish(*op, Status::Aborted(describe(*op) + " failed: " + p.lost.message()));
  } else if (p.sendq.empty() && !p.writing && !stop_ && op->bytes <= kInlineSendBytes) {
    // Nothing ahead of it: the caller writes a small message itself, not the sender thread
    // (a hand-off and a wake-up per message saved). The peer's reader thread always drains
    // the socket, so the write does not wait on the peer's program.
    p.writing = true;
    op->state = Op::State::kActive;
    lk.unlock();
    Status s = write_message(peer, *op);
    lk.lock();
    p.writing = false;
    finish(*op, s.ok() ? s : Status::Aborted(describe(*op) + " failed: " + s.message()));
    if (!p.sendq.empty()) send_cv_.notify_all();
  } else {
    p.sendq.push_back(op);
    send_cv_.notify_all();
  }
  return op;
}

// A message to this rank itself: copied now, into a posted receive or the stash.
void Fabric::self_send(const std::shared_ptr<Op>& op) {
  std::vector<char> msg(op->bytes);
  size_t off = 0;
  for (const IoPiece& p : op->pieces) {
    if (p.data && p.bytes) std::memcpy(msg.data() + off, p.data, p.bytes);
    off += p.bytes;
  }
  stash(Key{rank_, op->group, op->tag}, std::move(msg));
  std::lock_guard<std::mutex> lk(mu_);
  finish(*op, Status::OK());
}

std::shared_ptr<Op> Fabric::post_recv(int peer, uint64_t group, int tag, const RecvInto& into) {
  auto op = std::make_shared<Op>();
  op->pieces.assign(into.pieces.begin(), into.pieces.end());
  op->sink = into.sink;
  op->bytes = total_bytes(into.pieces);
  op->group = group;
  op->tag = tag;
  op->peer = peer;
  std::vector<char> msg;
  {
    std::lock_guard<std::mutex> lk(mu_);
    const Key k{peer, group, tag};
    auto it = unexpected_.find(k);
    if (it == unexpected_.end() || it->second.empty()) {
      const Status& lost = peers_[static_cast<size_t>(peer)].lost;
      if (!lost.ok()) {
        finish(*op, Status::Aborted(describe(*op) + " failed: " + lost.message()));
      } else {
        posted_[k].push_back(op);
      }
      return op;
    }
    msg = std::move(it->second.front());
    it->second.pop_front();
    op->state = Op::State::kActive;
  }
  Status s = deliver(*op, msg);
  std::lock_guard<std::mutex> lk(mu_);
  finish(*op, s.ok() ? s : Status::Internal(describe(*op) + ": " + s.message()));
  return op;
}

// A message nobody waits for yet: handed to a receive posted meanwhile, else kept.
void Fabric::stash(const Key& k, std::vector<char> msg) {
  std::shared_ptr<Op> op;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = posted_.find(k);
    if (it == posted_.end() || it->second.empty()) {
      unexpected_[k].push_back(std::move(msg));
      return;
    }
    op = it->second.front();
    it->second.pop_front();
    op->state = Op::State::kActive;
  }
  Status s = deliver(*op, msg);
  std::lock_guard<std::mutex> lk(mu_);
  finish(*op, s.ok() ? s : Status::Internal(describe(*op) + ": " + s.message()));
}

Status Fabric::wait(const std::shared_ptr<Op>& op, double deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  auto done = [&] { return op->state == Op::State::kDone; };
  if (deadline == kNoDeadline) {
    done_cv_.wait(lk, done);
  } else if (!done_cv_.wait_until(lk, to_time_point(deadline), done)) {
    return Status::Timeout("tcp transport: " + describe(*op) + " timed out (rank " + std::to_string(op->peer) +
                               " may have died or stalled)",
                           op->peer);
  }
  return op->status;
}

bool Fabric::test(const std::shared_ptr<Op>& op) {
  std::lock_guard<std::mutex> lk(mu_);
  return op->state == Op::State::kDone;
}

void Fabric::cancel(const std::shared_ptr<Op>& op) {
  std::unique_lock<std::mutex> lk(mu_);
  if (op->state == Op::State::kQueued) {
    auto drop = [&](std::deque<std::shared_ptr<Op>>& q) { q.erase(std::remove(q.begin(), q.end(), op), q.end()); };
    if (op->send) {
      drop(peers_[static_cast<size_t>(op->peer)].sendq);
    } else {
      auto it = posted_.find(Key{op->peer, op->group, op->tag});
      if (it != posted_.end()) drop(it->second);
    }
    op->state = Op::State::kDone;
    return;
  }
  done_cv_.wait(lk, [&] { return op->state == Op::State::kDone; });
}

void Fabric::peer_lost(int peer, const std::string& why) {
  std::lock_guard<std::mutex> lk(mu_);
  Peer& p = peers_[static_cast<size_t>(peer)];
  p.eof = true;
  if (p.lost.ok()) p.lost = Status::Aborted("rank " + std::to_string(peer) + " (" + p.name + ") " + why);
  for (auto& [k, q] : posted_) {
    if (std::get<0>(k) != peer) continue;
    for (auto& op : q) finish(*op, Status::Aborted(describe(*op) + " failed: " + p.lost.message()));
    q.clear();
  }
  done_cv_.notify_all();
}

void Fabric::reader_loop(int peer) {
  const int fd = peers_[static_cast<size_t>(peer)].fd.get();
  for (;;) {
    Header h{};
    bool clean = false;
    Status s = read_all(fd, &h, sizeof h, kNoDeadline, &clean);
    if (!s.ok()) return peer_lost(peer, clean ? "closed its connection" : "connection failed: " + s.message());
    if (h.magic != kMagic) return peer_lost(peer, "sent a corrupt message header");
    const Key k{peer, h.group, h.tag};
    std::shared_ptr<Op> op;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = posted_.find(k);
      if (it != posted_.end() && !it->second.empty()) {
        op = it->second.front();
        it->second.pop_front();
        op->state = Op::State::kActive;
      }
    }
    if (!op) {
      std::vector<char> msg(h.bytes);
      s = read_all(fd, msg.data(), msg.size(), kNoDeadline);
      if (!s.ok()) return peer_lost(peer, "closed its connection mid-message (" + s.message() + ")");
      stash(k, std::move(msg));
      continue;
    }
    Status fit = target_of(*op, h.bytes);
    s = read_pieces(fd, fit.ok() ? op->pieces : std::vector<IoPiece>{}, h.bytes);
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!s.ok()) {
        finish(*op, Status::Aborted(describe(*op) + " failed: rank " + std::to_string(peer) +
                                    " closed its connection mid-message (" + s.message() + ")"));
      } else {
        finish(*op, fit.ok() ? fit : Status::Internal(describe(*op) + ": " + fit.message()));
      }
    }
    if (!s.ok()) return peer_lost(peer, "closed its connection mid-message");
  }
}

Status Fabric::write_message(int peer, const Op& op) {
  static const std::vector<char> zeros(1 << 16);
  Header h{op.group, op.tag, kMagic, op.bytes};
  std::vector<iovec> iov{{&h, sizeof h}};
  for (const IoPiece& p : op.pieces) {
    if (p.data) {
      if (p.bytes) iov.push_back({p.data, p.bytes});
      continue;
    }
    for (size_t o = 0; o < p.bytes; o += zeros.size())  // phantom: zeros of its size
      iov.push_back({const_cast<char*>(zeros.data()), std::min(zeros.size(), p.bytes - o)});
  }
  return writev_all(peers_[static_cast<size_t>(peer)].fd.get(), iov.data(), static_cast<int>(iov.size()));
}

void Fabric::sender_loop(int peer) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  for (;;) {
    std::shared_ptr<Op> op;
    {
      std::unique_lock<std::mutex> lk(mu_);
      send_cv_.wait(lk, [&] { return stop_ || (!p.sendq.empty() && !p.writing); });
      if (p.sendq.empty()) return;
      if (p.writing) continue;  // stopping while a caller writes: take the rest after it
      op = p.sendq.front();
      op->state = Op::State::kActive;
      p.writing = true;
    }
    Status s = write_message(peer, *op);
    std::lock_guard<std::mutex> lk(mu_);
    p.writing = false;
    p.sendq.pop_front();
    finish(*op, s.ok() ? s : Status::Aborted(describe(*op) + " failed: " + s.message()));
  }
}

}  // namespace hvd::tcp
