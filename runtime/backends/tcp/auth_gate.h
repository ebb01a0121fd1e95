// The acceptor's side of the handshake (auth.h) for a listening socket: AuthGate accepts
// connections and runs all their handshakes in one poll loop, so an idle or hostile
// connection costs one descriptor until kAuthTimeoutS, never a thread, and never holds up
// the others. A connection that fails (wrong key, a replayed or malformed answer, a line
// longer than kMaxAuthLine, data sent before the answer, silence) is dropped and logged
// once; nothing it sent is read as data.
#pragma once

#include <functional>
#include <list>
#include <string>

#include "backends/tcp/auth.h"
#include "backends/tcp/socket.h"
#include "hvd/status.h"

namespace hvd::tcp {

class AuthGate {
 public:
  /// Decides on an authenticated connection's claim: false and *why refuse it.
  using Admit = std::function<bool(const std::string& claim, std::string* why)>;

  /// Gates `listener` (kept open by the caller) for `proto` ("rendezvous", "peer"); log lines
  /// start with `who`.
  AuthGate(const Fd& listener, std::string key, std::string proto, std::string who);
  ~AuthGate();
  AuthGate(const AuthGate&) = delete;
  AuthGate& operator=(const AuthGate&) = delete;

  /// The next connection that proves the key and is admitted (answered "OK", blocking
  /// mode) before `deadline`; kTimeout at the deadline.
  Status next(double deadline, const Admit& admit, Fd* out, std::string* claim);
  /// Connections refused so far.
  int refused() const { return refused_; }
  /// Connections waiting in the handshake now.
  size_t pending() const { return pending_.size(); }

  /// At most this many handshakes wait at once; a newer connection drops the oldest.
  static constexpr size_t kMaxPending = 256;

 private:
  struct Pending {
    Fd fd;
    AuthChallenge challenge;
    std::string buf;
    double until = 0;
    std::string from;
  };
  void accept_new();
  // Reads what arrived; true with *out when the connection passed.
  bool advance(Pending& p, const Admit& admit, Fd* out, std::string* claim);
  void refuse(Pending& p, const std::string& why, bool answer);

  const Fd& listener_;
  std::string key_, proto_, who_;
  std::list<Pending> pending_;
  int refused_ = 0;
};

}  // namespace hvd::tcp
