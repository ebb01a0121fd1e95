#include "backends/tcp/auth_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <vector>

namespace hvd::tcp {

namespace {

// Refusals logged one line each; later ones are counted and summed up when the gate closes.
constexpr int kLoggedRefusals = 5;

std::string peer_name(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET)
    return "?";
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

AuthGate::AuthGate(const Fd& listener, std::string key, std::string proto, std::string who)
    : listener_(listener), key_(std::move(key)), proto_(std::move(proto)), who_(std::move(who)) {
  // accept_new() takes every waiting connection, until accept4 says there is none left.
  fcntl(listener_.get(), F_SETFL, fcntl(listener_.get(), F_GETFL) | O_NONBLOCK);
}

AuthGate::~AuthGate() {
  if (refused_ > kLoggedRefusals)
    std::fprintf(stderr, "%s: refused %d connections in all (the first %d logged)\n", who_.c_str(),
                 refused_, kLoggedRefusals);
}

void AuthGate::refuse(Pending& p, const std::string& why, bool answer) {
  if (answer) {
    const std::string line = "ERR " + why + "\n";
    (void)::send(p.fd.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ++refused_;
  if (refused_ <= kLoggedRefusals)
    std::fprintf(stderr, "%s: refused a %s connection from %s: %s%s\n", who_.c_str(),
                 proto_.c_str(), p.from.c_str(), why.c_str(),
                 refused_ == kLoggedRefusals ? " (further refusals are counted, not logged)" : "");
  p.fd.reset();
}

void AuthGate::accept_new() {
  for (;;) {
    Fd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!c.valid()) {
      if ((errno == EMFILE || errno == ENFILE) &&
          !pending_.empty()) {  // out of descriptors: drop the oldest
        refuse(pending_.front(), "dropped: out of file descriptors while it waited", false);
        pending_.pop_front();
        continue;
      }
      return;  // EAGAIN (none left), or an error the next poll will show again
    }
    if (pending_.size() >= kMaxPending) {
      refuse(pending_.front(),
             "dropped: " + std::to_string(kMaxPending) + " newer handshakes were waiting", false);
      pending_.pop_front();
    }
    Pending p;
    p.fd = std::move(c);
    p.challenge = AuthChallenge{proto_, fresh_nonce()};
    p.until = now_s() + kAuthTimeoutS;
    p.from = peer_name(p.fd.get());
    const std::string line = p.challenge.line();
    if (::send(p.fd.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(line.size()))
      continue;  // gone already
    pending_.push_back(std::move(p));
  }
}

bool AuthGate::advance(Pending& p, const Admit& admit, Fd* out, std::string* claim) {
  char buf[kMaxAuthLine + 1];
  const ssize_t r = ::recv(p.fd.get(), buf, sizeof buf, 0);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (r <= 0) {
    refuse(
        p,
        r == 0 ? "closed before it answered the challenge" : "connection failed in the handshake",
        false);
    return false;
  }
  p.buf.append(buf, static_cast<size_t>(r));
  const size_t nl = p.buf.find('\n');
  if (nl == std::string::npos) {
    if (p.buf.size() > kMaxAuthLine)
      refuse(p, "sent more than " + std::to_string(kMaxAuthLine) + " bytes without a line end",
             true);
    return false;
  }
  if (nl > kMaxAuthLine) {
    refuse(p, "sent a line longer than " + std::to_string(kMaxAuthLine) + " bytes", true);
    return false;
  }
  if (nl + 1 != p.buf.size()) {  // the connector waits for "OK" before it sends anything else
    refuse(p, "sent data before it was authenticated", true);
    return false;
  }
  std::string answer, why;
  if (!p.challenge.check(key_, p.buf.substr(0, nl), claim, &answer, &why) ||
      (admit && !admit(*claim, &why))) {
    refuse(p, why, true);
    return false;
  }
  const int flags = fcntl(p.fd.get(), F_GETFL);
  fcntl(p.fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  if (!write_all(p.fd.get(), answer.data(), answer.size()).ok()) {
    refuse(p, "closed before it got its answer", false);
    return false;
  }
  *out = std::move(p.fd);
  return true;
}

Status AuthGate::next(double deadline, const Admit& admit, Fd* out, std::string* claim) {
  for (;;) {
    const double now = now_s();
    for (auto it = pending_.begin(); it != pending_.end();) {  // silent too long: dropped
      if (it->fd.valid() && it->until <= now)
        refuse(*it, "did not answer the challenge within 10 s", false);
      it = it->fd.valid() ? std::next(it) : pending_.erase(it);
    }
    if (now >= deadline) return Status::Timeout("no connection passed the handshake");
    double wake = deadline;
    for (const Pending& p : pending_) wake = std::min(wake, p.until);
    std::vector<pollfd> fds{{listener_.get(), POLLIN, 0}};
    for (const Pending& p : pending_) fds.push_back({p.fd.get(), POLLIN, 0});
    const double left = wake - now;
    const int ms = std::isinf(left) ? -1 : static_cast<int>(std::min(left * 1000 + 1, 1e9));
    const int rc = ::poll(fds.data(), fds.size(), ms);
    if (rc < 0 && errno != EINTR) return Status::Internal("poll on the listening socket failed");
    if (rc <= 0) continue;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL))
      return Status::Aborted("the listening socket was closed");
    size_t i = 1;
    bool passed = false;
    for (auto it = pending_.begin(); it != pending_.end(); ++i) {
      if (!passed && fds[i].revents) passed = advance(*it, admit, out, claim);
      it = it->fd.valid() ? std::next(it) : pending_.erase(it);
      if (passed) break;
    }
    if (fds[0].revents & POLLIN) accept_new();
    if (passed) return Status::OK();
  }
}

}  // namespace hvd::tcp
