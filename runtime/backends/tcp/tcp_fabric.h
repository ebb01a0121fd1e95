// The TCP backend's connections: one socket per pair of ranks, a reader and a sender
// thread per peer, and the matching of messages to receives by (peer, group, tag) in FIFO
// order. Every transport of a world (the world and its splits) shares one Fabric.
//
// On the wire a message is a 24-byte header (group, tag, magic, length) and its bytes. A
// send completes when the kernel has the bytes (eager); a message that arrives before its
// receive is posted waits in memory. The reader of a peer writes a matched message straight
// into the receive's pieces (or into SizedSink::room(n), asked when the header arrives).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backends/tcp/socket.h"
#include "hvd/transport.h"

namespace hvd::tcp {

/// One send or receive.
struct Op {
  enum class State { kQueued, kActive, kDone };
  std::vector<IoPiece> pieces;  ///< the send's bytes, or where the receive puts them
  SizedSink* sink = nullptr;    ///< a receive of any size
  size_t bytes = 0;             ///< total of the pieces
  uint64_t group = 0;
  int tag = 0;
  int peer = 0;                 ///< world rank
  bool send = false;
  State state = State::kQueued;
  Status status;
};

class Fabric {
 public:
  /// `fds[q]`: the connected socket to world rank q (none for `rank`); `names[q]`:
  /// "host:port" of rank q for messages.
  Fabric(int rank, std::vector<Fd> fds, std::vector<std::string> names);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(peers_.size()); }

  std::shared_ptr<Op> post_send(int peer, uint64_t group, int tag, IoSpan pieces);
  std::shared_ptr<Op> post_recv(int peer, uint64_t group, int tag, const RecvInto& into);
  /// Until `op` is done or `deadline` (then kTimeout naming the transfer and the peer).
  Status wait(const std::shared_ptr<Op>& op, double deadline);
  bool test(const std::shared_ptr<Op>& op);
  /// The owner gives `op` up: withdrawn if not started, else waited for (a started transfer
  /// ends when its bytes have moved or its connection dies).
  void cancel(const std::shared_ptr<Op>& op);

 private:
  using Key = std::tuple<int, uint64_t, int>;  // peer, group, tag
  struct Peer {
    Fd fd;
    std::string name;
    std::deque<std::shared_ptr<Op>> sendq;
    bool writing = false;  // a message is being written to the socket (sender or caller)
    Status lost;  // set when the connection closed or failed
    bool eof = false;
    std::thread reader, sender;
  };

  void reader_loop(int peer);
  void sender_loop(int peer);
  Status read_message(int peer, Op& op, size_t n);
  Status write_message(int peer, const Op& op);
  void self_send(const std::shared_ptr<Op>& op);
  void stash(const Key& k, std::vector<char> msg);
  void peer_lost(int peer, const std::string& why);
  void finish(Op& op, Status s);  // under mu_
  std::string describe(const Op& op) const;
  void close_all();

  int rank_;
  std::vector<Peer> peers_;
  std::mutex mu_;
  std::condition_variable done_cv_;  // an op finished
  std::condition_variable send_cv_;  // a send was queued, or stopping
  std::map<Key, std::deque<std::shared_ptr<Op>>> posted_;
  std::map<Key, std::deque<std::vector<char>>> unexpected_;
  bool stop_ = false;
};

}  // namespace hvd::tcp
