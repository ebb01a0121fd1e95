// Builds the SimGrid platform of a ClusterSpec in code (or loads a platform XML).
//
//   root zone (star: one non-blocking switch; or star of leaf zones for a fat tree; or a
//   SimGrid torus; or a SimGrid dragonfly of groups, chassis and routers)
//    └─ server zone k (full zone): GPU hosts gpu<k>-<i> + router nic<k> (the gateway)
//         GPU i <-> GPU j : intra_i (up), intra_j (down)   (PCIe switch or NVLink fabric)
//         GPU i <-> NIC   : intra_i  (NIC per server)  |  nic_i (NIC per GPU)
//    server k <-> switch  : cable_k (NIC per server)   |  nothing (NIC per GPU)
#pragma once

#include <vector>

#include "hvd/sim/cluster.h"
#include "hvd/status.h"
#include "model/seams.h"

namespace hvd::sim {

/// Where the ranks live once the platform exists.
struct BuiltPlatform {
  std::vector<sg4::Host*> gpus;  ///< GPU hosts in rank order (server by server)
  std::vector<int> node_of;      ///< server index of each GPU host
};

/// Creates the zones, hosts and links of `c` in the current engine.
Status build_platform(const ClusterSpec& c, BuiltPlatform* out);

/// Loads c.platform_file into the current engine: every host of the XML file is a GPU (sorted
/// by name), its netzone is its server.
Status load_platform_file(const ClusterSpec& c, BuiltPlatform* out);

/// Per-direction bandwidth of the links inside a server of `c` (bytes/s).
double intra_bandwidth(const ClusterSpec& c);

}  // namespace hvd::sim
