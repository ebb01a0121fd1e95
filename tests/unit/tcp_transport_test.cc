// The TCP backend at unit level: ranks are threads of this process talking over loopback
// sockets through a rendezvous server of their own. Point-to-point semantics (tags, order,
// sized receives, pieces, splits), the runtime's collectives on top, and the error paths
// (wrong key, a rank that never arrives, a peer that closes mid-message). Deadlines here
// only prove "no hang": they are generous and no test compares a duration with a bound.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "backends/tcp/auth.h"
#include "backends/tcp/rendezvous.h"
#include "backends/tcp/socket.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"
#include "hvd/tcp.h"
#include "test_util.h"

namespace hvd {
namespace {

constexpr double kGenerous = 60;  // s: only a hang reaches it

TcpOptions options(const RendezvousServer& srv, int rank, int size, const std::string& host = "localhost") {
  TcpOptions o;
  o.rendezvous_addr = "127.0.0.1";
  o.rendezvous_port = srv.port();
  o.key = "k3y";
  o.rank = rank;
  o.size = size;
  o.hostname = host;
  o.advertise_addr = "127.0.0.1";
  o.start_timeout_s = kGenerous;
  return o;
}

// `size` ranks on threads, each with its TCP world transport: body(t) then the transport
// goes. `host_of(r)` is the host rank r reports.
void on_tcp_ranks(int size, const std::function<void(Transport&)>& body,
                  const std::function<std::string(int)>& host_of = [](int) { return "localhost"; }) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      std::unique_ptr<Transport> t;
      Status s = make_tcp_world_transport(options(*srv, r, size, host_of(r)), &t);
      if (!s.ok()) {
        ADD_FAILURE() << "rank " << r << ": " << s.to_string();
        ++failed;
        return;
      }
      body(*t);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
}

TEST(TcpRendezvous, SetGetAndWrongKey) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("secret", 0, &srv).ok());
  std::unique_ptr<tcp::RendezvousClient> c;
  const double deadline = tcp::now_s() + kGenerous;
  ASSERT_TRUE(tcp::RendezvousClient::connect("127.0.0.1", srv->port(), "secret", deadline, &c).ok());
  ASSERT_TRUE(c->set("a/b", std::string("x y\nz\0w", 8)).ok());
  std::string v;
  ASSERT_TRUE(c->get("a/b", deadline, &v).ok());
  EXPECT_EQ(v, std::string("x y\nz\0w", 8));
  Status missing = c->get("nope", tcp::now_s(), &v);  // a deadline already past: one look
  EXPECT_EQ(missing.code(), StatusCode::kTimeout) << missing.to_string();
  std::unique_ptr<tcp::RendezvousClient> bad;
  Status s = tcp::RendezvousClient::connect("127.0.0.1", srv->port(), "other", deadline, &bad);
  EXPECT_EQ(s.code(), StatusCode::kPrecondition);
  EXPECT_NE(s.message().find("rejected this rank's key"), std::string::npos) << s.message();
}

TEST(TcpTransport, TagsOrderPiecesAndSizedReceives) {
  on_tcp_ranks(3, [](Transport& t) {
    const int me = t.rank(), n = t.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    // Ten messages on two tags, received in reverse tag order: each tag keeps its order.
    std::vector<std::unique_ptr<Request>> sends;
    std::vector<int> out(10);
    for (int i = 0; i < 10; ++i) {
      out[static_cast<size_t>(i)] = me * 100 + i;
      sends.push_back(t.isend(next, &out[static_cast<size_t>(i)], 4, i % 2 ? 7 : 8));
    }
    for (int tag : {7, 8}) {
      for (int i = tag == 7 ? 1 : 0; i < 10; i += 2) {
        int v = -1;
        ASSERT_TRUE(recv(t, prev, &v, 4, tag, tcp::now_s() + kGenerous).ok());
        EXPECT_EQ(v, prev * 100 + i);
      }
    }
    for (auto& s : sends) ASSERT_TRUE(s->wait(tcp::now_s() + kGenerous).ok());
    // Three pieces as one message of 1 MiB + 3 bytes, into a sized receive.
    std::vector<char> a(1 << 20, static_cast<char>(me)), b(3, 'b'), c;
    const IoPiece ps[] = {{a.data(), a.size()}, {nullptr, 0}, {b.data(), b.size()}};
    auto s = t.isendv(next, IoSpan(ps, 3), kTagData);
    struct Sink final : SizedSink {
      std::vector<char>* v;
      void* room(size_t n) override {
        v->resize(n);
        return v->data();
      }
    } sink;
    sink.v = &c;
    ASSERT_TRUE(t.irecv_sized(prev, &sink, kTagData)->wait(tcp::now_s() + kGenerous).ok());
    ASSERT_TRUE(s->wait(tcp::now_s() + kGenerous).ok());
    ASSERT_EQ(c.size(), a.size() + 3);
    EXPECT_EQ(c[12345], static_cast<char>(prev));
    EXPECT_EQ(std::string(c.end() - 3, c.end()), "bbb");
    // A message to itself, and a receive of the wrong size is an error, not a hang.
    int self = 42, got = 0;
    ASSERT_TRUE(sendrecv(t, me, &self, 4, me, &got, 4, kTagControl, tcp::now_s() + kGenerous).ok());
    EXPECT_EQ(got, 42);
    int64_t big = 0;
    auto wrong = t.irecv(prev, &big, 8, 9);
    ASSERT_TRUE(send(t, next, &self, 4, 9, tcp::now_s() + kGenerous).ok());
    Status ws = wrong->wait(tcp::now_s() + kGenerous);
    EXPECT_EQ(ws.code(), StatusCode::kInternal);
    EXPECT_NE(ws.message().find("size mismatch"), std::string::npos) << ws.message();
    ASSERT_TRUE(sendrecv(t, next, &self, 4, prev, &got, 4, 10, tcp::now_s() + kGenerous).ok());  // in step
  });
}

TEST(TcpTransport, WaitWithADeadlineTimesOutAndLeavesTheReceivePosted) {
  on_tcp_ranks(2, [](Transport& t) {
    const int other = 1 - t.rank();
    int v = 0, mine = t.rank() + 5;
    auto r = t.irecv(other, &v, 4, 11);
    Status s = r->wait(tcp::now_s() + 0.05);  // nothing was sent yet
    EXPECT_EQ(s.code(), StatusCode::kTimeout);
    EXPECT_NE(s.message().find("receiving 4 bytes from rank " + std::to_string(other)), std::string::npos) << s.message();
    int done = 0;  // both ranks are past the time-out before either sends on tag 11
    ASSERT_TRUE(sendrecv(t, other, &done, 4, other, &done, 4, 12, tcp::now_s() + kGenerous).ok());
    ASSERT_TRUE(send(t, other, &mine, 4, 11, tcp::now_s() + kGenerous).ok());
    ASSERT_TRUE(r->wait(tcp::now_s() + kGenerous).ok());
    EXPECT_EQ(v, other + 5);
  });
}

TEST(TcpTransport, SplitsAndNodesFromReportedHosts) {
  // Hosts a, a, b, b: two nodes of two ranks.
  on_tcp_ranks(4, [](Transport& t) {
    EXPECT_EQ(t.local_size(), 2);
    EXPECT_EQ(t.cross_size(), 2);
    EXPECT_EQ(t.local_rank(), t.rank() % 2);
    EXPECT_EQ(t.cross_rank(), t.rank() / 2);
    auto odd = t.split(t.rank() % 2 ? 1 : -1, -t.rank());  // odd ranks, reversed
    auto local = t.split(t.node_of(t.rank()), t.rank());
    if (t.rank() % 2) {
      ASSERT_NE(odd, nullptr);
      EXPECT_EQ(odd->size(), 2);
      EXPECT_EQ(odd->rank(), t.rank() == 3 ? 0 : 1);
      int v = t.rank(), got = -1;
      ASSERT_TRUE(sendrecv(*odd, 1 - odd->rank(), &v, 4, 1 - odd->rank(), &got, 4, kTagData, tcp::now_s() + kGenerous).ok());
      EXPECT_EQ(got, t.rank() == 3 ? 1 : 3);
    } else {
      EXPECT_EQ(odd, nullptr);
    }
    ASSERT_NE(local, nullptr);
    int v = t.rank(), got = -1;  // same tag on the world and the split: kept apart by group
    auto w = t.irecv(t.rank() ^ 1, &got, 4, kTagData);
    int lv = -1;
    auto l = local->irecv(1 - local->rank(), &lv, 4, kTagData);
    ASSERT_TRUE(send(*local, 1 - local->rank(), &v, 4, kTagData, tcp::now_s() + kGenerous).ok());
    int wv = v + 1000;
    ASSERT_TRUE(send(t, t.rank() ^ 1, &wv, 4, kTagData, tcp::now_s() + kGenerous).ok());
    ASSERT_TRUE(l->wait(tcp::now_s() + kGenerous).ok());
    ASSERT_TRUE(w->wait(tcp::now_s() + kGenerous).ok());
    EXPECT_EQ(lv, t.rank() ^ 1);
    EXPECT_EQ(got, (t.rank() ^ 1) + 1000);
  }, [](int r) { return r < 2 ? "a" : "b"; });
}

// The runtime's own collectives over TCP, checked against the serial reference.
TEST(TcpTransport, RuntimeCollectivesOnTop) {
  on_tcp_ranks(3, [](Transport& t) {
    OwnedSeams seams = host_seams(nullptr);
    Seams v = seams.view();
    v.transport = &t;
    Status s = run_rank(RuntimeOptions{v, test::fast_config()}, [](Runtime& rt) {
      const int64_t count = 5000;
      for (DataType dt : {DataType::kFloat32, DataType::kInt64, DataType::kFloat16}) {
        for (ReduceOp op : test::all_ops()) {
          const size_t bytes = static_cast<size_t>(count) * dtype_size(dt);
          std::vector<uint8_t> in(bytes), out(bytes);
          for (int64_t i = 0; i < count; ++i) test::store(in, i, dt, test::test_value(rt.rank(), i, op, dt));
          Tensor ti{in.data(), dt, {count}}, to{out.data(), dt, {count}};
          ASSERT_TRUE(rt.allreduce("ar." + std::string(dtype_name(dt)) + std::string(op_name(op)), ti, to, op).ok());
          for (int64_t i = 0; i < count; i += 97) {
            const double want = test::reference(rt.size(), i, op, dt);
            ASSERT_NEAR(test::load(out.data(), i, dt), want, test::tolerance(dt, op, want));
          }
        }
      }
      std::vector<int32_t> b(100, rt.rank());
      ASSERT_TRUE(rt.broadcast("b", Tensor{b.data(), DataType::kInt32, {100}}, 2).ok());
      EXPECT_EQ(b[99], 2);
      ASSERT_TRUE(rt.barrier().ok());
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
  });
}

TEST(TcpErrors, RankThatNeverArrivesIsNamedAtTheDeadline) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
  std::vector<Status> got(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)  // a world of 3; rank 2 never starts
    threads.emplace_back([&, r] {
      TcpOptions o = options(*srv, r, 3);
      o.start_timeout_s = 0.5;
      std::unique_ptr<Transport> t;
      got[static_cast<size_t>(r)] = make_tcp_world_transport(o, &t);
    });
  for (auto& t : threads) t.join();
  for (const Status& s : got) {
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
    EXPECT_NE(s.message().find("rank 2 never reached the rendezvous"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("HVD_START_TIMEOUT"), std::string::npos) << s.message();
  }
}

TEST(TcpErrors, WrongKeyIsRefused) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
  TcpOptions o = options(*srv, 0, 1);
  o.key = "stale";
  std::unique_ptr<Transport> t;
  Status s = make_tcp_world_transport(o, &t);
  EXPECT_EQ(s.code(), StatusCode::kPrecondition) << s.to_string();
  EXPECT_NE(s.message().find("HVD_RENDEZVOUS_KEY"), std::string::npos) << s.message();
  o.rank = 5;
  EXPECT_EQ(make_tcp_world_transport(o, &t).code(), StatusCode::kInvalidArgument);
}

// Rank 1 is played by hand: it joins, announces a 1000-byte message, sends 10 bytes and
// closes. Rank 0's receive fails naming the peer; the next one fails at once.
TEST(TcpErrors, PeerClosingMidMessage) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
  std::thread fake([&] {
    const double deadline = tcp::now_s() + kGenerous;
    std::unique_ptr<tcp::RendezvousClient> rv;
    ASSERT_TRUE(tcp::RendezvousClient::connect("127.0.0.1", srv->port(), "k3y", deadline, &rv).ok());
    ASSERT_TRUE(rv->set("world/rank/1", "127.0.0.1 1 localhost").ok());
    std::string zero;
    ASSERT_TRUE(rv->get("world/rank/0", deadline, &zero).ok());
    const int port = std::stoi(zero.substr(zero.find(' ') + 1));
    tcp::Fd c;
    ASSERT_TRUE(tcp::connect_until("127.0.0.1", port, deadline, &c).ok());
    ASSERT_TRUE(tcp::authenticate_to(c.get(), "k3y", "peer", "1 2", deadline).ok());
    struct { uint64_t group; int32_t tag; uint32_t magic; uint64_t bytes; } h{0, kTagData, 0x48564454, 1000};
    char part[10] = {};
    ASSERT_TRUE(tcp::write_all(c.get(), &h, sizeof h).ok());
    ASSERT_TRUE(tcp::write_all(c.get(), part, sizeof part).ok());
  });  // the socket closes when the thread ends
  std::unique_ptr<Transport> t;
  ASSERT_TRUE(make_tcp_world_transport(options(*srv, 0, 2), &t).ok());
  std::vector<char> buf(1000);
  Status s = t->irecv(1, buf.data(), buf.size(), kTagData)->wait(tcp::now_s() + kGenerous);
  fake.join();
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.to_string();
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("mid-message"), std::string::npos) << s.message();
  Status next = t->irecv(1, buf.data(), 4, kTagData)->wait(tcp::now_s() + kGenerous);
  EXPECT_EQ(next.code(), StatusCode::kAborted) << next.to_string();
  EXPECT_NE(next.message().find("closed its connection"), std::string::npos) << next.message();
}

}  // namespace
}  // namespace hvd
