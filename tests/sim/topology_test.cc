// The built platforms' routes, link by link: every message between two servers leaves through
// its own GPU's link and its own server's cable (or its GPU's NIC) and arrives through the
// other's, and crosses the spine exactly when the two servers sit under different leaves.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "hvd/sim/isolate.h"
#include "model/topology.h"

namespace hvd::sim {
namespace {

// Builds `c` in a fresh engine (in a child) and checks every ordered pair of GPUs on two
// servers; returns "" or the first wrong route.
std::string check_routes(const ClusterSpec& c) {
  std::string out;
  Status s = run_isolated(
      [&](std::string* r) {
        static int argc = 2;
        static char a0[] = "topology_test", a1[] = "--log=root.thres:critical";
        static char* argv[] = {a0, a1, nullptr};
        sg4::Engine e(&argc, argv);
        BuiltPlatform plat;
        HVD_RETURN_IF_ERROR(build_platform(c, &plat));
        e.seal_platform();
        const int n = static_cast<int>(plat.gpus.size());
        const int per = std::max(1, c.network.servers_per_switch);
        const bool per_gpu = c.network.nic == "per_gpu";
        for (int a = 0; a < n; ++a)
          for (int b = 0; b < n; ++b) {
            const int ka = plat.node_of[a], kb = plat.node_of[b];
            if (ka == kb) continue;
            std::vector<sg4::Link*> links;
            double lat = 0;
            plat.gpus[a]->route_to(plat.gpus[b], links, &lat);
            std::vector<std::string> got;
            for (sg4::Link* l : links) got.push_back(l->get_name());
            const std::string ia = std::to_string(ka) + "-" + std::to_string(a % c.gpus_per_node);
            const std::string ib = std::to_string(kb) + "-" + std::to_string(b % c.gpus_per_node);
            std::vector<std::string> want;
            if (per_gpu) {
              want.push_back("nic" + ia + "_UP");
            } else {
              want.push_back("intra" + ia + "_UP");
              want.push_back("cable" + std::to_string(ka) + "_UP");
            }
            if (c.network.topology == "fat_tree" && ka / per != kb / per) {
              want.push_back("uplink" + std::to_string(ka / per) + "_UP");
              want.push_back("uplink" + std::to_string(kb / per) + "_DOWN");
            }
            if (per_gpu) {
              want.push_back("nic" + ib + "_DOWN");
            } else {
              want.push_back("cable" + std::to_string(kb) + "_DOWN");
              want.push_back("intra" + ib + "_DOWN");
            }
            if (got != want) {
              std::string g, w;
              for (const auto& x : got) g += x + " ";
              for (const auto& x : want) w += x + " ";
              *r = plat.gpus[a]->get_name() + " -> " + plat.gpus[b]->get_name() + ": [" + g + "], want [" + w + "]";
              return Status::OK();
            }
          }
        *r = "";
        return Status::OK();
      },
      &out);
  return s.ok() ? out : s.to_string();
}

ClusterSpec cluster(const std::string& topology, int nodes, int gpus, const std::string& nic, int per = 16) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu = "V100";
  c.network.topology = topology;
  c.network.bandwidth = 12.5e9;
  c.network.latency = 2e-6;
  c.network.nic = nic;
  c.network.servers_per_switch = per;
  return c;
}

TEST(SimTopology, StarRoutesEveryServerThroughItsOwnLinks) {
  EXPECT_EQ(check_routes(cluster("star", 3, 4, "per_server")), "");
  EXPECT_EQ(check_routes(cluster("star", 3, 4, "per_gpu")), "");
}

// One, two and three servers a leaf (and a last leaf part full): a route from a GPU two zones
// down to the leaf's switch once went through whichever server shared the GPU's id, or threw.
TEST(SimTopology, FatTreeRoutesEveryServerThroughItsOwnCableAndCrossesTheSpineBetweenLeaves) {
  for (int per : {1, 2, 3, 16}) {
    EXPECT_EQ(check_routes(cluster("fat_tree", 7, 4, "per_server", per)), "") << "servers_per_switch " << per;
    EXPECT_EQ(check_routes(cluster("fat_tree", 5, 2, "per_gpu", per)), "") << "servers_per_switch " << per << ", NIC per GPU";
  }
}

}  // namespace
}  // namespace hvd::sim
