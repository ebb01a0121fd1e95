// The Transport of a TCP world's group over the shared Fabric (tcp_transport.cc); the
// world itself is built in tcp_world.cc.
#pragma once

#include <memory>
#include <vector>

#include "backends/tcp/tcp_fabric.h"
#include "hvd/transport.h"

namespace hvd::tcp {

/// The world group: every rank of `fabric`, rank r on node `node[r]`. `split_timeout_s`
/// bounds the waits of split() (a peer that never takes part).
std::unique_ptr<Transport> make_world_transport(std::shared_ptr<Fabric> fabric, std::vector<int> node,
                                                double split_timeout_s);

}  // namespace hvd::tcp
