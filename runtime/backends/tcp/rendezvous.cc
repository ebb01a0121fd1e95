// The rendezvous: a key-value store over TCP that the ranks of a TCP world use to find
// each other (hvdrun --tcp runs the server; Horovod's is an HTTP store). A connection first
// proves the job's key by challenge-response (auth.h, protocol "rendezvous"; the key never
// crosses the wire), then sends requests in order, each a text line answered by one line:
//
//   SET <name> <n>\n<n bytes> -> OK
//   GET <name>              -> VAL <n>\n<n bytes> | NONE
//
// Names have no spaces. GET does not block: clients poll until a deadline. One thread runs
// every handshake (AuthGate: idle or hostile connections cost no thread); each
// authenticated connection gets a thread of its own, joined when it closes.
#include "backends/tcp/rendezvous.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/tcp/auth.h"
#include "backends/tcp/auth_gate.h"
#include "hvd/tcp.h"

namespace hvd {

namespace {

constexpr size_t kMaxValue = size_t{1} << 20;

class Server final : public RendezvousServer {
 public:
  Server(std::string key, tcp::Fd listener, int port)
      : listener_(std::move(listener)), gate_(listener_, std::move(key), "rendezvous", "hvd rendezvous"), port_(port) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~Server() override {
    stop_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    accept_thread_.join();
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (Client& c : clients_) ::shutdown(c.fd, SHUT_RDWR);
    }
    for (Client& c : clients_) c.thread.join();  // only the joined accept thread adds to it
  }
  int port() const override { return port_; }
  void put(const std::string& name, const std::string& value) override {
    std::lock_guard<std::mutex> lk(mu_);
    store_[name] = value;
  }
  bool get(const std::string& name, std::string* value) const override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = store_.find(name);
    if (it == store_.end()) return false;
    *value = it->second;
    return true;
  }
  std::vector<std::string> names_under(const std::string& prefix) const override {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<std::string> out;
    for (auto it = store_.lower_bound(prefix); it != store_.end() && it->first.rfind(prefix, 0) == 0; ++it)
      out.push_back(it->first);
    return out;
  }

 private:
  struct Client {
    int fd;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void accept_loop() {
    while (!stop_) {
      reap();
      tcp::Fd c;
      std::string claim;
      Status s = gate_.next(tcp::now_s() + 0.2, nullptr, &c, &claim);
      if (s.code() == StatusCode::kAborted) break;  // the listener was shut down
      if (!s.ok()) continue;
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_) break;
      auto done = std::make_shared<std::atomic<bool>>(false);
      const int fd = c.release();
      clients_.push_back(Client{fd, std::thread([this, fd, done] {
                                  serve(tcp::Fd(fd));
                                  *done = true;
                                }),
                                done});
    }
  }

  // Joins the threads of closed connections.
  void reap() {
    std::list<Client> finished;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (auto it = clients_.begin(); it != clients_.end();) {
        if (*it->done) {
          finished.splice(finished.end(), clients_, it++);
        } else {
          ++it;
        }
      }
    }
    for (Client& c : finished) c.thread.join();
  }

  void serve(tcp::Fd c) {
    std::string line;
    while (!stop_ && tcp::read_line(c.get(), &line, kNoDeadline).ok()) {
      if (!answer(c.get(), line)) break;
    }
    std::lock_guard<std::mutex> lk(mu_);
    for (Client& cl : clients_)
      if (cl.fd == c.get()) cl.fd = -1;  // closed below, not shut down by the destructor
  }

  // Handles one request of an authenticated client; false ends the connection.
  bool answer(int fd, const std::string& line) {
    std::istringstream in(line);
    std::string verb, name;
    in >> verb >> name;
    if (verb == "SET") {
      size_t n = 0;
      if (!(in >> n) || n > kMaxValue) return false;
      std::string v(n, '\0');
      if (!tcp::read_all(fd, v.data(), n, tcp::now_s() + 60).ok()) return false;
      {
        std::lock_guard<std::mutex> lk(mu_);
        store_[name] = std::move(v);
      }
      return tcp::write_all(fd, "OK\n", 3).ok();
    }
    if (verb == "GET") {
      std::string out = "NONE\n";
      {
        std::lock_guard<std::mutex> lk(mu_);
        auto it = store_.find(name);
        if (it != store_.end()) out = "VAL " + std::to_string(it->second.size()) + "\n" + it->second;
      }
      return tcp::write_all(fd, out.data(), out.size()).ok();
    }
    const std::string e = "ERR unknown request\n";
    (void)tcp::write_all(fd, e.data(), e.size());
    return false;
  }

  tcp::Fd listener_;
  tcp::AuthGate gate_;  // runs the handshakes on listener_
  int port_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::map<std::string, std::string> store_;
  std::list<Client> clients_;
  std::thread accept_thread_;
};

}  // namespace

Status RendezvousServer::start(const std::string& key, int port, std::unique_ptr<RendezvousServer>* out,
                               const std::string& bind_addr) {
  if (key.empty() || key.find_first_of(" \n") != std::string::npos)
    return Status::InvalidArgument("rendezvous key must be non-empty, without spaces");
  tcp::Fd l;
  HVD_RETURN_IF_ERROR(tcp::listen_on(bind_addr, &port, &l));
  *out = std::make_unique<Server>(key, std::move(l), port);
  return Status::OK();
}

namespace tcp {

Status RendezvousClient::connect(const std::string& addr, int port, const std::string& key, double deadline,
                                 std::unique_ptr<RendezvousClient>* out) {
  auto c = std::unique_ptr<RendezvousClient>(new RendezvousClient());
  c->where_ = addr + ":" + std::to_string(port);
  c->deadline_ = deadline;
  Status s = connect_until(addr, port, deadline, &c->fd_);
  if (!s.ok()) return Status::Timeout("rendezvous server " + c->where_ + " unreachable: " + s.message());
  s = authenticate_to(c->fd_.get(), key, "rendezvous", "", deadline);
  if (s.code() == StatusCode::kPrecondition && s.message() == "wrong key")
    return Status::Precondition("rendezvous server " + c->where_ +
                                " rejected this rank's key (HVD_RENDEZVOUS_KEY differs from the job's)");
  if (!s.ok()) return Status(s.code(), "rendezvous server " + c->where_ + ": " + s.message());
  *out = std::move(c);
  return Status::OK();
}

Status RendezvousClient::call(const std::string& line, const std::string& body, std::string* answer,
                              std::string* value) {
  const std::string req = line + "\n" + body;
  Status s = write_all(fd_.get(), req.data(), req.size());
  if (s.ok()) s = read_line(fd_.get(), answer, deadline_);
  if (s.ok() && answer->rfind("VAL ", 0) == 0) {
    const size_t n = std::stoul(answer->substr(4));
    value->assign(n, '\0');
    s = read_all(fd_.get(), value->data(), n, deadline_);
    *answer = "VAL";
  }
  if (!s.ok()) return Status(s.code(), "rendezvous server " + where_ + ": " + s.message());
  return Status::OK();
}

Status RendezvousClient::set(const std::string& name, const std::string& value) {
  std::string answer, ignored;
  HVD_RETURN_IF_ERROR(call("SET " + name + " " + std::to_string(value.size()), value, &answer, &ignored));
  if (answer != "OK") return Status::Internal("rendezvous server " + where_ + " refused SET " + name + ": " + answer);
  return Status::OK();
}

Status RendezvousClient::get(const std::string& name, double deadline, std::string* value) {
  double pause = 0.002;
  for (;;) {
    std::string answer;
    HVD_RETURN_IF_ERROR(call("GET " + name, "", &answer, value));
    if (answer == "VAL") return Status::OK();
    if (answer != "NONE") return Status::Internal("rendezvous server " + where_ + ": " + answer);
    if (now_s() >= deadline) return Status::Timeout(name + " was never set");
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 2, 0.1);
  }
}

}  // namespace tcp

}  // namespace hvd
