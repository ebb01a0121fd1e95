// fork()-per-simulation. The child runs the job and writes "<status code>\n<message
// length>\n<message><result>" to a pipe; the parent reads until EOF and reaps the child.
#include "hvd/sim/isolate.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <algorithm>
#include <map>

namespace hvd::sim {
namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string bytes;
};

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

Status start(const IsolatedJob& job, Child* c) {
  int fds[2];
  if (::pipe(fds) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    std::string result;
    Status s;
    try {
      s = job(&result);
    } catch (const std::exception& e) {
      s = Status::Internal(std::string("simulation threw: ") + e.what());
    }
    std::string msg = s.message();
    std::string out = std::to_string(static_cast<int>(s.code())) + "\n" + std::to_string(msg.size()) +
                      "\n" + msg + result;
    write_all(fds[1], out);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  c->pid = pid;
  c->fd = fds[0];
  return Status::OK();
}

// Reads everything the child wrote and decodes it.
Status finish(Child* c, std::string* result) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(c->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    c->bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(c->fd);
  int wstatus = 0;
  while (::waitpid(c->pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus))
    return Status::Internal("simulation process died of signal " + std::to_string(WTERMSIG(wstatus)) +
                            " (" + strsignal(WTERMSIG(wstatus)) + ")");
  const std::string& b = c->bytes;
  size_t p1 = b.find('\n');
  size_t p2 = p1 == std::string::npos ? p1 : b.find('\n', p1 + 1);
  if (p2 == std::string::npos) return Status::Internal("simulation process ended without a result");
  const int code = std::stoi(b.substr(0, p1));
  const size_t len = std::stoul(b.substr(p1 + 1, p2 - p1 - 1));
  std::string msg = b.substr(p2 + 1, len);
  *result = b.substr(p2 + 1 + len);
  if (code != 0) return Status(static_cast<StatusCode>(code), msg);
  return Status::OK();
}

}  // namespace

Status run_isolated(const IsolatedJob& job, std::string* result) {
  // Debugging aid: HVD_SIM_NO_FORK=1 runs the (single) job in this process.
  if (const char* nf = std::getenv("HVD_SIM_NO_FORK"); nf && nf[0] == '1') return job(result);
  Child c;
  HVD_RETURN_IF_ERROR(start(job, &c));
  return finish(&c, result);
}

std::vector<Status> run_isolated_many(const std::vector<IsolatedJob>& jobs, int parallel,
                                      std::vector<std::string>* results,
                                      const std::function<void(size_t)>& on_done) {
  std::vector<Status> st(jobs.size());
  results->assign(jobs.size(), {});
  parallel = std::max(1, parallel);
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      Child c;
      st[next] = start(jobs[next], &c);
      if (st[next].ok()) running.emplace_back(next, c);
      else if (on_done) on_done(next);
      ++next;
    }
    if (running.empty()) continue;
    // Read whatever the children have written; a child is done at EOF on its pipe.
    std::vector<pollfd> fds;
    for (auto& r : running) fds.push_back({r.second.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    for (size_t i = running.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = ::read(running[i].second.fd, buf, sizeof buf);
      if (n > 0) {
        running[i].second.bytes.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      const size_t job = running[i].first;
      Child c = running[i].second;
      running.erase(running.begin() + static_cast<long>(i));
      st[job] = finish(&c, &(*results)[job]);
      if (on_done) on_done(job);
    }
  }
  return st;
}

}  // namespace hvd::sim
