// Elastic mode of the TCP backend: a worker's world is a generation that hvdrun's elastic
// driver published in the rendezvous ("elastic/gen" = g, "elastic/<g>/assign" = one
// "<worker id> <host>" line per rank, in rank order). Joining means: wait for a generation
// newer than the last one this worker was in that names it, take its rank there, and meet
// the other ranks under the scope "gen<g>" (so the addresses of older generations, whose
// ranks may be dead, are never read).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "backends/tcp/rendezvous.h"
#include "hvd/tcp.h"

namespace hvd {

namespace {

// The latest generation (0 when none is published yet).
Status read_generation(tcp::RendezvousClient& rv, int64_t* gen) {
  std::string v;
  Status s = rv.get("elastic/gen", tcp::now_s(), &v);
  if (s.code() == StatusCode::kTimeout) {
    *gen = 0;
    return Status::OK();
  }
  HVD_RETURN_IF_ERROR(s);
  *gen = std::strtoll(v.c_str(), nullptr, 10);
  return Status::OK();
}

// This worker's rank in generation g and the generation's size; rank -1 when g leaves it out.
Status read_assignment(tcp::RendezvousClient& rv, int64_t g, const std::string& me, int* rank, int* size) {
  std::string v;
  HVD_RETURN_IF_ERROR(rv.get("elastic/" + std::to_string(g) + "/assign", tcp::now_s() + 5, &v));
  std::istringstream in(v);
  *rank = -1;
  *size = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string id;
    if (!(words >> id)) continue;
    if (id == me) *rank = *size;
    ++*size;
  }
  return Status::OK();
}

std::string worker_id() {
  const char* id = std::getenv("HVD_ELASTIC_WORKER");
  return id ? id : "";
}

}  // namespace

bool tcp_elastic_from_env() { return tcp_launched_from_env() && !worker_id().empty(); }

Status latest_elastic_generation(const TcpOptions& opts, int64_t* gen) {
  // One connection for the process's life (every commit asks; the server keeps a thread per
  // connection).
  static std::mutex mu;
  static std::unique_ptr<tcp::RendezvousClient> rv;
  std::lock_guard<std::mutex> lk(mu);
  if (!rv)
    HVD_RETURN_IF_ERROR(tcp::RendezvousClient::connect(opts.rendezvous_addr, opts.rendezvous_port, opts.key,
                                                       tcp::now_s() + opts.start_timeout_s, &rv));
  rv->set_deadline(tcp::now_s() + opts.start_timeout_s);
  Status s = read_generation(*rv, gen);
  if (!s.ok()) rv.reset();
  return s;
}

Status join_elastic_tcp_world(TcpOptions opts, int64_t after, int64_t* gen, std::unique_ptr<Transport>* out) {
  const std::string me = worker_id();
  if (me.empty()) return Status::InvalidArgument("HVD_ELASTIC_WORKER is not set (hvdrun's elastic mode sets it)");
  const double deadline = tcp::now_s() + opts.start_timeout_s;
  std::unique_ptr<tcp::RendezvousClient> rv;
  HVD_RETURN_IF_ERROR(tcp::RendezvousClient::connect(opts.rendezvous_addr, opts.rendezvous_port, opts.key, deadline, &rv));
  // Tells the driver this worker came to the reset point of generation `after`: a member
  // of it that does not come too hangs (hvdrun's elastic driver removes it).
  if (after > 0) HVD_RETURN_IF_ERROR(rv->set("elastic/left/" + me, std::to_string(after)));
  Status last = Status::OK();
  while (tcp::now_s() < deadline) {
    int64_t g = 0;
    HVD_RETURN_IF_ERROR(read_generation(*rv, &g));
    int rank = -1, size = 0;
    if (g > after) HVD_RETURN_IF_ERROR(read_assignment(*rv, g, me, &rank, &size));
    if (rank < 0) {  // nothing new for this worker yet
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    TcpOptions o = opts;
    o.rank = rank;
    o.size = size;
    o.scope = "gen" + std::to_string(g);
    o.start_timeout_s = std::max(1.0, deadline - tcp::now_s());
    last = make_tcp_world_transport(o, out);
    if (last.ok()) {
      *gen = g;
      return last;
    }
    after = g;  // that generation never formed (a member died meanwhile): wait for the next
  }
  std::ostringstream t;
  t << opts.start_timeout_s;
  return Status::Timeout("elastic worker " + me + ": no generation after " + std::to_string(after) +
                         " that includes it formed within " + t.str() + " s (--elastic-timeout)" +
                         (last.ok() ? "" : "; last attempt: " + last.message()));
}

}  // namespace hvd
