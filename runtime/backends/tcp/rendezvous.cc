// The rendezvous: a key-value store over TCP that the ranks of a TCP world use to find
// each other (hvdrun --tcp runs the server; Horovod's is an HTTP store). One connection
// per client, requests in order, each a text line, answered by one line:
//
//   HELLO <key>             -> OK | ERR wrong key      (first, mandatory)
//   SET <name> <n>\n<n bytes> -> OK
//   GET <name>              -> VAL <n>\n<n bytes> | NONE
//
// Names have no spaces. A client that has not said HELLO with the server's key gets
// "ERR wrong key" and is disconnected. GET does not block: clients poll until a deadline.
#include "backends/tcp/rendezvous.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "hvd/tcp.h"

namespace hvd {

namespace {

constexpr size_t kMaxValue = size_t{1} << 20;

class Server final : public RendezvousServer {
 public:
  Server(std::string key, tcp::Fd listener, int port)
      : key_(std::move(key)), listener_(std::move(listener)), port_(port) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~Server() override {
    stop_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    accept_thread_.join();
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : clients_) t.join();  // only the joined accept thread adds to it
  }
  int port() const override { return port_; }
  void put(const std::string& name, const std::string& value) override {
    std::lock_guard<std::mutex> lk(mu_);
    store_[name] = value;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      tcp::Fd c;
      if (!tcp::accept_until(listener_, tcp::now_s() + 0.2, &c).ok()) continue;
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_) break;
      open_.push_back(c.get());
      clients_.emplace_back([this, fd = c.release()] { serve(tcp::Fd(fd)); });
    }
  }

  void serve(tcp::Fd c) {
    bool hello = false;
    std::string line;
    while (!stop_ && tcp::read_line(c.get(), &line, kNoDeadline).ok()) {
      if (!answer(c.get(), line, &hello)) break;
    }
    std::lock_guard<std::mutex> lk(mu_);
    open_.erase(std::remove(open_.begin(), open_.end(), c.get()), open_.end());
  }

  // Handles one request; false ends the connection.
  bool answer(int fd, const std::string& line, bool* hello) {
    std::istringstream in(line);
    std::string verb, name;
    in >> verb >> name;
    if (verb == "HELLO") {
      *hello = name == key_;
      (void)tcp::write_all(fd, *hello ? "OK\n" : "ERR wrong key\n", *hello ? 3 : 14);
      return *hello;
    }
    if (!*hello) return false;
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

  std::string key_;
  tcp::Fd listener_;
  int port_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, std::string> store_;
  std::vector<int> open_;
  std::vector<std::thread> clients_;
  std::thread accept_thread_;
};

}  // namespace

Status RendezvousServer::start(const std::string& key, int port, std::unique_ptr<RendezvousServer>* out) {
  if (key.empty() || key.find_first_of(" \n") != std::string::npos)
    return Status::InvalidArgument("rendezvous key must be non-empty, without spaces");
  tcp::Fd l;
  HVD_RETURN_IF_ERROR(tcp::listen_on(&port, &l));
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
  std::string answer, value;
  s = c->call("HELLO " + key, "", &answer, &value);
  if (!s.ok()) return s;
  if (answer != "OK")
    return Status::Precondition("rendezvous server " + c->where_ +
                                " rejected this rank's key (HVD_RENDEZVOUS_KEY differs from the job's)");
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
