// Socket helpers of the TCP backend: every blocking step takes a deadline (steady-clock
// seconds, the std platform's time) and says what failed in its Status.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <string>

#include "hvd/status.h"

namespace hvd::tcp {

/// Steady-clock seconds: the std platform's time, which request deadlines use.
double now_s();

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// A socket listening on `port` (0: any) of the interface with address `addr` (a name or
/// dotted quad, resolved to IPv4; never every interface); *port gets the one bound.
Status listen_on(const std::string& addr, int* port, Fd* out);
/// Connects to host:port, retrying refused connections until `deadline`.
Status connect_until(const std::string& host, int port, double deadline, Fd* out);
/// Accepts one connection on `listener` before `deadline` (kTimeout after).
Status accept_until(const Fd& listener, double deadline, Fd* out);
/// Writes all `n` bytes (blocking; MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
Status write_all(int fd, const void* data, size_t n);
/// Writes the `count` pieces of `iov` in order (blocking), advancing over partial writes.
Status writev_all(int fd, struct iovec* iov, int count);
/// Reads exactly `n` bytes before `deadline` (kNoDeadline: block). *eof_at_start tells a
/// clean close before the first byte from a close mid-way (both are errors).
Status read_all(int fd, void* data, size_t n, double deadline, bool* eof_at_start = nullptr);
/// One line (up to '\n', which is dropped) of at most `max` bytes before `deadline`.
Status read_line(int fd, std::string* line, double deadline, size_t max = 4096);
/// This machine's host name.
std::string host_name();

}  // namespace hvd::tcp
