// The SimGrid implementations of the three seams (internal to libhvdsim).
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hvd/device.h"
#include "hvd/platform.h"
#include "hvd/sim/cluster.h"
#include "hvd/transport.h"

namespace hvd::sim {

namespace sg4 = simgrid::s4u;

/// The simulated clock and S4U concurrency (stateless: one instance serves every rank).
std::unique_ptr<Platform> make_sim_platform();

/// A with-data message waiting for its partner (matched FIFO per mailbox, like SimGrid).
struct DataMatch {
  const void* src = nullptr;  ///< sender's bytes
  void* dst = nullptr;        ///< receiver's buffer
  size_t bytes = 0;           ///< this side's size
  bool matched = false;       ///< partner found and bytes copied
  bool mismatch = false;      ///< sizes differed
};

/// State shared by the transports of every rank of one world: hosts, nodes, mailboxes,
/// process-set splits and (with data) the payload matching.
class SimFabric {
 public:
  SimFabric(std::vector<sg4::Host*> hosts, std::vector<int> node, bool with_data);
  /// Host of world rank r.
  sg4::Host* host(int r) const { return hosts_[static_cast<size_t>(r)]; }
  /// Number of world ranks.
  int size() const { return static_cast<int>(hosts_.size()); }
  /// Node index of world rank r.
  int node_of(int r) const { return node_[static_cast<size_t>(r)]; }
  /// True when messages carry real bytes.
  bool with_data() const { return with_data_; }
  /// The mailbox of messages (group, src, dst, tag) (world ranks).
  sg4::Mailbox* mailbox(int group, int src, int dst, int tag);
  /// With data: registers one side of a message and copies on match.
  std::shared_ptr<DataMatch> post(sg4::Mailbox* mb, bool is_send, const void* src, void* dst,
                                  size_t bytes);
  /// With data: withdraws an unmatched side.
  void withdraw(sg4::Mailbox* mb, const std::shared_ptr<DataMatch>& m);
  /// Collective split of `group` (see Transport::split); returns the new group's members
  /// (world ranks, ordered) and id, or empty for color < 0.
  std::vector<int> split(int group, int seq, size_t members, int me, int color, int key,
                         int* new_group);

 private:
  struct Queues {
    std::deque<std::shared_ptr<DataMatch>> sends, recvs;
  };
  struct SplitState {
    std::map<int, std::pair<int, int>> entries;  // world rank -> (color, key)
    std::map<int, int> groups;                   // color -> group id
    sg4::MutexPtr mu = sg4::Mutex::create();
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  };
  std::vector<sg4::Host*> hosts_;
  std::vector<int> node_;
  bool with_data_;
  std::unordered_map<uint64_t, sg4::Mailbox*> mailboxes_;
  std::unordered_map<sg4::Mailbox*, Queues> data_;
  std::map<std::pair<int, int>, std::unique_ptr<SplitState>> splits_;
  int next_group_ = 1;
};

/// The world transport of `rank` over `fabric`.
std::unique_ptr<Transport> make_sim_transport(std::shared_ptr<SimFabric> fabric, int rank);

/// A simulated device: phantom (no storage) unless `with_data`; every memory operation
/// costs bytes / bandwidth of simulated time on the calling actor.
std::unique_ptr<Device> make_sim_device(DeviceKind kind, const DeviceCostSpec& cost,
                                        bool with_data);

}  // namespace hvd::sim
