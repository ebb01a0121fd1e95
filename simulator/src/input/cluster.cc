#include "hvd/sim/cluster.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace hvd::sim {

// The calibration shared by every scenario and model (docs/simulator.md, "Calibration"):
// the fraction of the line rate a collective's flows achieve, and the software cost a
// message pays crossing the NICs (verbs post + completion for RDMA; the socket stack
// and its copies for TCP).
bool protocol_defaults(const std::string& protocol, ProtocolDefaults* out) {
  double* efficiency = &out->efficiency;
  double* overhead = &out->overhead;
  out->connection_rate = 0;
  if (protocol == "roce") {
    // RoCEv2 at RDMA MTU 4096: 82 bytes of Ethernet, IP, UDP, BTH and ICRC framing plus
    // preamble and gap per 4096 (98 %), RDMA-write headers and ACKs: 96 % of the line rate.
    // Per message, 10 us of software on top of the wire: verbs post and completion, NCCL's
    // proxy thread and the host staging of PCIe servers without GPUDirect RDMA
    // (docs/simulator.md, "Calibration": the sensitivity of every public point to it).
    *efficiency = 0.96;
    *overhead = 10e-6;
  } else if (protocol == "infiniband") {
    *efficiency = 0.98;  // IB MTU 4096: ~98 % payload
    *overhead = 3e-6;    // GPUDirect RDMA, no host staging
  } else if (protocol == "tcp") {
    // TCP/IPv4 at Ethernet MTU 1500 with timestamps: 1448 payload bytes per 1538 on the
    // wire (94 %). Per message the RoCE path's 10 us plus the kernel stack at both ends
    // (~10 us each). One connection is one socket served by one thread (NCCL's socket
    // transport: one socket per ring connection before NCCL_NSOCKS_PERTHREAD), whose copies
    // bound it at ~16 Gbit/s whatever the line rate.
    *efficiency = 0.94;
    *overhead = 30e-6;
    out->connection_rate = 16e9 / 8;
  } else {
    return false;
  }
  return true;
}

double ClusterSpec::gpu_slowdown(int r) const {
  auto it = gpu_speed.find(r);
  const double what_if = it != gpu_speed.end() && it->second > 0 ? 1.0 / it->second : 1.0;
  if (r <= 0 || gpu_speed_cv <= 0) return what_if;
  // A fixed, portable stream: splitmix64 of the GPU index, Box-Muller to a normal draw.
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  // The seed picks another stream: the index is XORed with a mask drawn from the seed
  // (none at seed 0, so seed 0 is the stream hvdsim always had).
  const uint64_t mask = gpu_speed_seed == 0 ? 0 : mix(0x5eed5eed5eed5eedULL ^ static_cast<uint64_t>(gpu_speed_seed));
  const uint64_t key = 2 * static_cast<uint64_t>(r);
  const double u1 = (static_cast<double>(mix(key ^ mask) >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(mix((key + 1) ^ mask) >> 11) + 0.5) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return what_if * std::max(0.05, 1.0 + gpu_speed_cv * std::clamp(z, -3.5, 3.5));
}

double NetworkSpec::effective_efficiency() const {
  ProtocolDefaults d;
  if (efficiency >= 0) return efficiency;
  return protocol_defaults(protocol, &d) ? d.efficiency : 1.0;
}

double NetworkSpec::effective_overhead() const {
  ProtocolDefaults d;
  if (message_overhead >= 0) return message_overhead;
  return protocol_defaults(protocol, &d) ? d.overhead : 0.0;
}

double NetworkSpec::effective_connection_rate() const {
  ProtocolDefaults d;
  if (connection_rate >= 0) return connection_rate;
  return protocol_defaults(protocol, &d) ? d.connection_rate : 0.0;
}

bool parse_dragonfly(const std::string& text, std::vector<unsigned>* out) {
  out->clear();
  std::string cur;
  int groups = 0;  // ';'-separated groups seen
  auto take = [&]() {
    if (cur.empty() || cur.size() > 6 || cur.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long v = std::stoul(cur);
    if (v == 0) return false;
    out->push_back(static_cast<unsigned>(v));
    cur.clear();
    return true;
  };
  for (char ch : text) {
    if (ch == ',' || ch == ';') {
      if (!take()) return false;
      if (ch == ';') {
        ++groups;
        if (out->size() != static_cast<size_t>(2 * groups)) return false;
      }
    } else {
      cur += ch;
    }
  }
  return take() && groups == 3 && out->size() == 7;
}

}  // namespace hvd::sim
