#include "backends/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

namespace hvd::tcp {

namespace {

std::string err(const std::string& what) { return what + ": " + std::strerror(errno); }

// Milliseconds left until `deadline` for poll(): -1 forever, at least 0.
int poll_ms(double deadline) {
  if (std::isinf(deadline)) return -1;
  const double left = deadline - now_s();
  return left <= 0 ? 0 : static_cast<int>(std::min(left * 1000 + 1, 1e9));
}

// Waits for `events` on fd; false at the deadline.
bool wait_fd(int fd, short events, double deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, poll_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return true;  // let the read/write report the error
  }
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One connect attempt to `ai` that ends by `deadline`.
Status connect_once(const addrinfo* ai, double deadline, Fd* out) {
  Fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!s.valid()) return Status::Internal(err("socket"));
  const int flags = fcntl(s.get(), F_GETFL);
  fcntl(s.get(), F_SETFL, flags | O_NONBLOCK);
  if (::connect(s.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return Status::Internal(err("connect"));
    if (!wait_fd(s.get(), POLLOUT, deadline)) return Status::Timeout("connect timed out");
    int e = 0;
    socklen_t len = sizeof e;
    getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &e, &len);
    if (e != 0) {
      errno = e;
      return Status::Internal(err("connect"));
    }
  }
  fcntl(s.get(), F_SETFL, flags);
  set_nodelay(s.get());
  *out = std::move(s);
  return Status::OK();
}

}  // namespace

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status listen_on(const std::string& addr, int* port, Fd* out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(addr.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) return Status::InvalidArgument("cannot resolve '" + addr + "' to listen on: " + gai_strerror(rc));
  sockaddr_in a = *reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  ::freeaddrinfo(res);
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::Internal(err("socket"));
  int one = 1;
  setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  a.sin_port = htons(static_cast<uint16_t>(*port));
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    char ip[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    return Status::InvalidArgument(err("cannot listen on " + addr + " (" + ip + ") port " + std::to_string(*port) +
                                       ": it is not an address of this host, or the port is taken"));
  }
  if (::listen(s.get(), 128) != 0) return Status::Internal(err("listen"));
  socklen_t len = sizeof a;
  getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  *out = std::move(s);
  return Status::OK();
}

Status connect_until(const std::string& host, int port, double deadline, Fd* out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return Status::InvalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  Status last;
  double pause = 0.005;
  do {
    last = connect_once(res, deadline, out);
    if (last.ok()) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 2, 0.2);
  } while (now_s() < deadline);
  ::freeaddrinfo(res);
  if (last.ok()) return last;
  return Status::Timeout("cannot connect to " + host + ":" + std::to_string(port) + " (" + last.message() + ")");
}

Status accept_until(const Fd& listener, double deadline, Fd* out) {
  if (!wait_fd(listener.get(), POLLIN, deadline)) return Status::Timeout("no connection arrived");
  Fd s(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!s.valid()) return Status::Internal(err("accept"));
  set_nodelay(s.get());
  *out = std::move(s);
  return Status::OK();
}

Status write_all(int fd, const void* data, size_t n) {
  iovec v{const_cast<void*>(data), n};
  return writev_all(fd, &v, 1);
}

Status writev_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(std::min(count, 1024));
    const ssize_t w = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::Aborted(err("send"));
    }
    size_t left = static_cast<size_t>(w);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return Status::OK();
}

Status read_all(int fd, void* data, size_t n, double deadline, bool* eof_at_start) {
  if (eof_at_start) *eof_at_start = false;
  size_t got = 0;
  while (got < n) {
    if (!std::isinf(deadline) && !wait_fd(fd, POLLIN, deadline))
      return Status::Timeout("timed out after " + std::to_string(got) + " of " + std::to_string(n) + " bytes");
    const ssize_t r = ::recv(fd, static_cast<char*>(data) + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::Aborted(err("receive"));
    }
    if (r == 0) {
      if (eof_at_start && got == 0) *eof_at_start = true;
      return Status::Aborted("connection closed after " + std::to_string(got) + " of " +
                             std::to_string(n) + " bytes");
    }
    got += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status read_line(int fd, std::string* line, double deadline, size_t max) {
  line->clear();
  for (;;) {
    char c = 0;
    HVD_RETURN_IF_ERROR(read_all(fd, &c, 1, deadline));
    if (c == '\n') return Status::OK();
    if (line->size() >= max) return Status::InvalidArgument("line longer than " + std::to_string(max) + " bytes");
    line->push_back(c);
  }
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace hvd::tcp
