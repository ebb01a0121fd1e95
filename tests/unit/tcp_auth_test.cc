// The TCP backend's handshake (backends/tcp/auth.h) under attack: the key never crosses the
// wire, a wrong key, a replayed handshake, garbage, a 1 MB line, a request sent without a
// handshake and 1,000 idle connections are refused while a job runs on the server; the
// job's sums stay right and no descriptor or thread is left behind. Deadlines only prove
// "no hang"; no duration is compared with a bound.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <sstream>
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

size_t entries(const char* dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}
size_t open_fds() {
  return entries("/proc/self/fd");
}
size_t threads() {
  return entries("/proc/self/task");
}

// Polls `f` until it holds or a generous deadline passes (the server drops connections on
// its own thread).
bool eventually(const std::function<bool()>& f) {
  const double until = tcp::now_s() + kGenerous;
  while (!f()) {
    if (tcp::now_s() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

tcp::Fd dial(int port) {
  tcp::Fd c;
  EXPECT_TRUE(tcp::connect_until("127.0.0.1", port, tcp::now_s() + kGenerous, &c).ok());
  return c;
}

// Reads what the server says until it closes (or 5 s): its refusal line, if any.
std::string until_closed(const tcp::Fd& c) {
  std::string all;
  for (;;) {
    std::string part;
    Status s = tcp::read_line(c.get(), &part, tcp::now_s() + 5, 4096);
    if (!s.ok()) return all;
    all += part + "\n";
  }
}

// The nonce of the server's challenge on `c`.
std::string challenge_of(const tcp::Fd& c, const std::string& proto) {
  std::string line;
  EXPECT_TRUE(tcp::read_line(c.get(), &line, tcp::now_s() + kGenerous).ok());
  std::istringstream in(line);
  std::string magic, p, ns;
  in >> magic >> p >> ns;
  EXPECT_EQ(magic, "HVDAUTH1");
  EXPECT_EQ(p, proto);
  return ns;
}

// A correct answer to nonce `ns` (what a legitimate rank sends, as an eavesdropper records it).
std::string answer_for(const std::string& key, const std::string& proto, const std::string& ns,
                       const std::string& claim) {
  const std::string nc = tcp::fresh_nonce();
  return "AUTH " + nc + " " +
         tcp::hmac_sha256_hex(key,
                              "hvd-auth-1 connector " + proto + " " + ns + " " + nc + " " + claim) +
         " " + claim + "\n";
}

TEST(TcpAuth, TheKeyNeverCrossesTheWireAndBothSidesProveIt) {
  // A fake acceptor records what a connecting rank sends, then replays an old proof.
  tcp::Fd listener;
  int port = 0;
  ASSERT_TRUE(tcp::listen_on("127.0.0.1", &port, &listener).ok());
  const std::string key = "s3cret-key-of-the-job";
  std::string sent;
  std::thread acceptor([&] {
    for (int round = 0; round < 2; ++round) {
      tcp::Fd c;
      ASSERT_TRUE(tcp::accept_until(listener, tcp::now_s() + kGenerous, &c).ok());
      tcp::AuthChallenge ch{"peer", tcp::fresh_nonce()};
      const std::string line = ch.line();
      ASSERT_TRUE(tcp::write_all(c.get(), line.data(), line.size()).ok());
      std::string auth, claim, answer, why;
      ASSERT_TRUE(tcp::read_line(c.get(), &auth, tcp::now_s() + kGenerous).ok());
      sent += auth;
      ASSERT_TRUE(ch.check(key, auth, &claim, &answer, &why)) << why;
      EXPECT_EQ(claim, "1 2");
      static std::string recorded;
      if (round == 0) recorded = answer;  // the genuine proof of round 0 ...
      ASSERT_TRUE(tcp::write_all(c.get(), recorded.data(), recorded.size())
                      .ok());  // ... replayed in round 1
    }
  });
  for (int round = 0; round < 2; ++round) {
    tcp::Fd c = dial(port);
    Status s = tcp::authenticate_to(c.get(), key, "peer", "1 2", tcp::now_s() + kGenerous);
    if (round == 0) {
      EXPECT_TRUE(s.ok()) << s.to_string();
    } else {
      EXPECT_EQ(s.code(), StatusCode::kPrecondition) << s.to_string();
      EXPECT_NE(s.message().find("did not prove the job's key"), std::string::npos) << s.message();
    }
  }
  acceptor.join();
  EXPECT_EQ(sent.find(key), std::string::npos) << sent;
}

// Every attack of the issue against the rendezvous of a running 3-rank job.
TEST(TcpAuth, RendezvousRefusesStrangersWhileAJobRuns) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 4096 && lim.rlim_max >= 4096) {
    lim.rlim_cur = 4096;  // the test holds 1,000 connections (both ends in this process)
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  const size_t fds_before = open_fds(), threads_before = threads();
  {
    std::unique_ptr<RendezvousServer> srv;
    ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
    std::atomic<bool> attacked{false};
    std::atomic<int> failed{0}, rounds{0};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.emplace_back([&, r] {
        TcpOptions o;
        o.rendezvous_addr = "127.0.0.1";
        o.rendezvous_port = srv->port();
        o.key = "k3y";
        o.rank = r;
        o.size = 3;
        o.hostname = "localhost";
        o.advertise_addr = "127.0.0.1";
        o.start_timeout_s = kGenerous;
        std::unique_ptr<Transport> t;
        Status s = make_tcp_world_transport(o, &t);
        if (!s.ok()) {
          ADD_FAILURE() << s.to_string();
          ++failed;
          return;
        }
        OwnedSeams seams = host_seams(nullptr);
        Seams v = seams.view();
        v.transport = t.get();
        s = run_rank(RuntimeOptions{v, test::fast_config()}, [&](Runtime& rt) {
          // Allreduces until the attack is over (and at least 20): every sum checked.
          bool go_on = true;
          for (int i = 0; go_on; ++i) {
            std::vector<float> in(1000, static_cast<float>(rt.rank() + i)), out(1000);
            Tensor ti{in.data(), DataType::kFloat32, {1000}},
                to{out.data(), DataType::kFloat32, {1000}};
            ASSERT_TRUE(rt.allreduce("ar", ti, to, ReduceOp::kSum).ok());
            ASSERT_EQ(out[999], static_cast<float>(3 * i + 3));
            int32_t more = i < 20 || !attacked ? 1 : 0, any = 0;  // rank 0 decides for all
            std::vector<int32_t> b{more};
            ASSERT_TRUE(rt.broadcast("go", Tensor{b.data(), DataType::kInt32, {1}}, 0).ok());
            any = b[0];
            go_on = any != 0;
            if (rt.rank() == 0) ++rounds;
          }
        });
        if (!s.ok()) {
          ADD_FAILURE() << s.to_string();
          ++failed;
        }
      });
    ASSERT_TRUE(eventually([&] { return rounds > 0 || failed > 0; }));
    const int port = srv->port();
    std::string world0;
    ASSERT_TRUE(srv->get("world/rank/0", &world0));

    // A wrong key: refused, named.
    std::unique_ptr<tcp::RendezvousClient> bad;
    Status s =
        tcp::RendezvousClient::connect("127.0.0.1", port, "wrong", tcp::now_s() + kGenerous, &bad);
    EXPECT_EQ(s.code(), StatusCode::kPrecondition) << s.to_string();
    EXPECT_NE(s.message().find("rejected this rank's key"), std::string::npos) << s.message();

    // A replayed handshake: a correct answer to one connection's challenge, sent on another.
    {
      tcp::Fd first = dial(port);
      const std::string recorded =
          answer_for("k3y", "rendezvous", challenge_of(first, "rendezvous"), "");
      ASSERT_TRUE(tcp::write_all(first.get(), recorded.data(), recorded.size()).ok());
      std::string ok;
      ASSERT_TRUE(tcp::read_line(first.get(), &ok, tcp::now_s() + kGenerous).ok());
      EXPECT_EQ(ok.rfind("OK ", 0), 0u) << ok;  // the genuine exchange passes
      tcp::Fd replay = dial(port);
      (void)challenge_of(replay, "rendezvous");
      ASSERT_TRUE(tcp::write_all(replay.get(), recorded.data(), recorded.size()).ok());
      EXPECT_EQ(until_closed(replay), "ERR wrong key\n");
    }

    // Garbage, a request without a handshake, a 1 MB line, data after the answer: refused,
    // and nothing of it is stored.
    {
      tcp::Fd g = dial(port);
      const std::string junk = "\x01\x02garbage \xff\n";
      (void)tcp::write_all(g.get(), junk.data(), junk.size());
      until_closed(g);
      tcp::Fd set = dial(port);
      const std::string req = "SET world/rank/0 5\nevil!";
      (void)tcp::write_all(set.get(), req.data(), req.size());
      until_closed(set);
      tcp::Fd big = dial(port);
      const std::string mb(1 << 20, 'x');
      (void)tcp::write_all(big.get(), mb.data(), mb.size());  // cut off after 512 bytes
      until_closed(big);
      tcp::Fd sneaky = dial(port);
      const std::string both =
          answer_for("k3y", "rendezvous", challenge_of(sneaky, "rendezvous"), "") +
          "SET world/rank/0 5\nevil!";
      (void)tcp::write_all(sneaky.get(), both.data(), both.size());
      EXPECT_EQ(until_closed(sneaky), "ERR sent data before it was authenticated\n");
      std::string now;
      ASSERT_TRUE(srv->get("world/rank/0", &now));
      EXPECT_EQ(now, world0);
    }

    // 1,000 idle connections: they cost the server no thread, and a rank still gets in.
    {
      const size_t fds_idle_before = open_fds(), threads_idle_before = threads();
      std::vector<tcp::Fd> idle;
      for (int i = 0; i < 1000; ++i) idle.push_back(dial(port));
      EXPECT_EQ(threads(), threads_idle_before);
      std::unique_ptr<tcp::RendezvousClient> good;
      ASSERT_TRUE(
          tcp::RendezvousClient::connect("127.0.0.1", port, "k3y", tcp::now_s() + kGenerous, &good)
              .ok());
      std::string v;
      ASSERT_TRUE(good->get("world/rank/0", tcp::now_s() + kGenerous, &v).ok());
      EXPECT_EQ(v, world0);
      good.reset();
      idle.clear();
      EXPECT_TRUE(eventually([&] {
        return open_fds() <= fds_idle_before && threads() <= threads_idle_before;
      })) << open_fds()
          << " descriptors (" << fds_idle_before << " before), " << threads() << " threads ("
          << threads_idle_before << " before)";
    }
    attacked = true;
    for (auto& t : ranks) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_GE(rounds.load(), 20);
  }
  EXPECT_EQ(open_fds(), fds_before);
  EXPECT_EQ(threads(), threads_before);
}

// A rank's own listener during the start: a wrong key, a replay, the old clear-text
// greeting and an idle connection are turned away, and the world still forms and computes.
// World of 3: ranks 0 and 1 are real, rank 2 is played by hand (it publishes an address and
// connects to both with the key), so that rank 0's listener is open while the test attacks.
TEST(TcpAuth, PeerListenerRefusesStrangersDuringTheStart) {
  std::unique_ptr<RendezvousServer> srv;
  ASSERT_TRUE(RendezvousServer::start("k3y", 0, &srv).ok());
  auto opts = [&](int r) {
    TcpOptions o;
    o.rendezvous_addr = "127.0.0.1";
    o.rendezvous_port = srv->port();
    o.key = "k3y";
    o.rank = r;
    o.size = 3;
    o.hostname = "localhost";
    o.advertise_addr = "127.0.0.1";
    o.start_timeout_s = kGenerous;
    return o;
  };
  std::unique_ptr<tcp::RendezvousClient> rv;
  ASSERT_TRUE(
      tcp::RendezvousClient::connect("127.0.0.1", srv->port(), "k3y", tcp::now_s() + kGenerous, &rv)
          .ok());
  ASSERT_TRUE(rv->set("world/rank/2", "127.0.0.1 1 localhost").ok());
  std::unique_ptr<Transport> t0, t1;
  Status s0, s1;
  std::thread rank0([&] { s0 = make_tcp_world_transport(opts(0), &t0); });
  std::thread rank1([&] { s1 = make_tcp_world_transport(opts(1), &t1); });
  std::string where0, where1;
  ASSERT_TRUE(eventually(
      [&] { return srv->get("world/rank/0", &where0) && srv->get("world/rank/1", &where1); }));
  const int port0 = std::stoi(where0.substr(where0.find(' ') + 1));
  const int port1 = std::stoi(where1.substr(where1.find(' ') + 1));
  tcp::Fd idle = dial(port0);  // stays silent to the end
  {
    tcp::Fd wrong = dial(port0);
    Status s = tcp::authenticate_to(wrong.get(), "stale", "peer", "2 3", tcp::now_s() + kGenerous);
    EXPECT_EQ(s.code(), StatusCode::kPrecondition);
    EXPECT_EQ(s.message(), "wrong key");
    tcp::Fd first = dial(port0);
    const std::string recorded = answer_for("k3y", "peer", challenge_of(first, "peer"), "2 3");
    tcp::Fd replay = dial(port0);
    (void)challenge_of(replay, "peer");
    ASSERT_TRUE(tcp::write_all(replay.get(), recorded.data(), recorded.size()).ok());
    EXPECT_EQ(until_closed(replay), "ERR wrong key\n");
    tcp::Fd old = dial(port0);
    (void)challenge_of(old, "peer");
    ASSERT_TRUE(
        tcp::write_all(old.get(), "HVDT 2 3 k3y\n", 13).ok());  // the old clear-text greeting
    EXPECT_EQ(until_closed(old), "ERR not an hvd handshake\n");
    tcp::Fd wrong_size = dial(port0);
    s = tcp::authenticate_to(wrong_size.get(), "k3y", "peer", "2 4", tcp::now_s() + kGenerous);
    EXPECT_EQ(s.message(), "world size 4, this rank's is 3");
  }
  // The real rank 2: proves the key to ranks 0 and 1.
  tcp::Fd to0 = dial(port0), to1 = dial(port1);
  ASSERT_TRUE(tcp::authenticate_to(to0.get(), "k3y", "peer", "2 3", tcp::now_s() + kGenerous).ok());
  ASSERT_TRUE(tcp::authenticate_to(to1.get(), "k3y", "peer", "2 3", tcp::now_s() + kGenerous).ok());
  rank0.join();
  rank1.join();
  ASSERT_TRUE(s0.ok()) << s0.to_string();
  ASSERT_TRUE(s1.ok()) << s1.to_string();
  int v = 7, got = 0;
  ASSERT_TRUE(send(*t1, 0, &v, 4, kTagData, tcp::now_s() + kGenerous).ok());
  ASSERT_TRUE(recv(*t0, 1, &got, 4, kTagData, tcp::now_s() + kGenerous).ok());
  EXPECT_EQ(got, 7);
  to0.reset();  // rank 2 leaves; ranks 0 and 1 close together (each waits for the other's goodbye)
  to1.reset();
  std::thread close0([&] { t0.reset(); });
  t1.reset();
  close0.join();
}

}  // namespace
}  // namespace hvd
