#include "model/topology.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::sim {
namespace {

using Dir = sg4::LinkInRoute::Direction;

constexpr double kGpuSpeed = 1e12;  // flops; compute is slept, never executed

// What-ifs (cluster.degraded_links) on server `node`'s NIC (gpu -1) or one GPU's link.
void degrade(const ClusterSpec& c, int node, int gpu, double* bw, double* lat) {
  for (const LinkDegradation& d : c.degraded_links)
    if (d.node == node && d.gpu == gpu) *bw *= d.bandwidth_factor, *lat += d.extra_latency;
}

sg4::Link* duplex(sg4::NetZone* z, const std::string& name, double bw, double lat) {
  auto* l = z->create_split_duplex_link(name, bw);
  l->set_latency(lat);
  l->seal();
  return l;
}

struct Server {
  sg4::NetZone* zone;
  simgrid::kernel::routing::NetPoint* gateway;
};

// One server: GPUs and the NIC router in a full zone with explicit routes.
Server build_server(const ClusterSpec& c, sg4::NetZone* parent, int k, BuiltPlatform* out) {
  const std::string sk = std::to_string(k);
  auto* z = sg4::create_full_zone("server" + sk);
  z->set_parent(parent);
  auto* nic = z->create_router("nic" + sk);
  const NetworkSpec& n = c.network;
  const double intra_bw = intra_bandwidth(c);
  std::vector<sg4::Host*> gpus;
  std::vector<sg4::Link*> intra, nics;
  for (int i = 0; i < c.gpus_per_node; ++i) {
    const std::string si = sk + "-" + std::to_string(i);
    gpus.push_back(z->create_host("gpu" + si, kGpuSpeed));
    double bw = intra_bw, lat = c.intra.latency;
    degrade(c, k, i, &bw, &lat);
    intra.push_back(duplex(z, "intra" + si, bw, lat));
    if (n.nic == "per_gpu") {
      bw = n.bandwidth * n.effective_efficiency();
      lat = n.latency / 2 + n.effective_overhead() / 2;
      degrade(c, k, -1, &bw, &lat);
      nics.push_back(duplex(z, "nic" + si, bw, lat));
    }
  }
  for (int i = 0; i < c.gpus_per_node; ++i) {
    for (int j = i + 1; j < c.gpus_per_node; ++j)
      z->add_route(gpus[i]->get_netpoint(), gpus[j]->get_netpoint(), nullptr, nullptr,
                   {{intra[i], Dir::UP}, {intra[j], Dir::DOWN}}, true);
    sg4::Link* out_link = n.nic == "per_gpu" ? nics[i] : intra[i];
    z->add_route(gpus[i]->get_netpoint(), nic, nullptr, nullptr, {{out_link, Dir::UP}}, true);
    out->gpus.push_back(gpus[i]);
    out->node_of.push_back(k);
  }
  z->seal();
  return {z, nic};
}

// Attaches server k to a star zone (the switch) through its cable.
void attach(const ClusterSpec& c, sg4::NetZone* star, const Server& s, int k) {
  const NetworkSpec& n = c.network;
  std::vector<sg4::LinkInRoute> links;
  double bw = n.bandwidth * n.effective_efficiency(),
         lat = n.latency / 2 + n.effective_overhead() / 2;
  degrade(c, k, -1, &bw, &lat);
  if (n.nic != "per_gpu")
    links.emplace_back(duplex(star, "cable" + std::to_string(k), bw, lat), Dir::UP);
  star->add_route(s.zone->get_netpoint(), nullptr, s.gateway, nullptr, links, true);
}

Status build_star(const ClusterSpec& c, BuiltPlatform* out) {
  auto* root = sg4::create_star_zone("switch");
  for (int k = 0; k < c.nodes; ++k) attach(c, root, build_server(c, root, k, out), k);
  root->seal();
  return Status::OK();
}

// Two levels: leaf switches of servers_per_switch servers, each with one aggregated
// uplink to a non-blocking spine of (servers x NIC bandwidth) / oversubscription.
Status build_fat_tree(const ClusterSpec& c, BuiltPlatform* out) {
  const NetworkSpec& n = c.network;
  auto* spine = sg4::create_star_zone("spine");
  const int per = std::max(1, n.servers_per_switch);
  const int leaves = (c.nodes + per - 1) / per;
  const double nic_bw = n.bandwidth * n.effective_efficiency() *
                        (n.nic == "per_gpu" ? c.gpus_per_node : 1);
  for (int l = 0; l < leaves; ++l) {
    auto* leaf = sg4::create_star_zone("leaf" + std::to_string(l));
    leaf->set_parent(spine);
    // The leaf switch sits in a zone of its own: SimGrid 3.32 resolves a route from a GPU
    // (two zones down) to a router placed directly in the leaf with the GPU's own netpoint
    // id, i.e. through another server's cable, or throws (find_common_ancestors stops one
    // level early). Zone to zone, the leaf routes every server through its own cable.
    auto* sw = sg4::create_empty_zone("leafswitch" + std::to_string(l));
    sw->set_parent(leaf);
    auto* gw = sw->create_router("leafsw" + std::to_string(l));
    sw->seal();
    leaf->add_route(sw->get_netpoint(), nullptr, gw, nullptr, {}, true);
    const int first = l * per, last = std::min(c.nodes, first + per);
    for (int k = first; k < last; ++k) attach(c, leaf, build_server(c, leaf, k, out), k);
    leaf->seal();
    const double up_bw = nic_bw * (last - first) / std::max(1e-9, n.oversubscription);
    auto* up = duplex(spine, "uplink" + std::to_string(l), up_bw, 0.0);
    spine->add_route(leaf->get_netpoint(), nullptr, gw, nullptr, {{up, Dir::UP}}, true);
  }
  spine->seal();
  return Status::OK();
}

Status build_torus(const ClusterSpec& c, BuiltPlatform* out) {
  std::vector<unsigned long> dims;
  std::stringstream ss(c.network.torus_dims);
  std::string part;
  unsigned long prod = 1;
  while (std::getline(ss, part, 'x')) {
    dims.push_back(std::stoul(part));
    prod *= dims.back();
  }
  if (dims.empty() || prod != static_cast<unsigned long>(c.nodes))
    return Status::InvalidArgument("cluster.network.torus_dims: \"" + c.network.torus_dims +
                                   "\" does not multiply out to cluster.nodes = " +
                                   std::to_string(c.nodes));
  const NetworkSpec& n = c.network;
  std::map<unsigned long, Server> servers;
  auto netpoint = [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    Server s = build_server(c, zone, static_cast<int>(id), out);
    return std::make_pair(s.zone->get_netpoint(), s.gateway);
  };
  sg4::create_torus_zone("torus", nullptr, dims, sg4::ClusterCallbacks(netpoint),
                         n.bandwidth * n.effective_efficiency(),
                         n.latency / 2 + n.effective_overhead() / 2,
                         sg4::Link::SharingPolicy::SPLITDUPLEX)
      ->seal();
  return Status::OK();
}

// SimGrid's dragonfly of servers: groups of chassis of routers, `servers` per router,
// every link at the network's rate and half its latency per hop.
Status build_dragonfly(const ClusterSpec& c, BuiltPlatform* out) {
  std::vector<unsigned> v;
  if (!parse_dragonfly(c.network.dragonfly, &v) || v[4] < 2 ||
      static_cast<unsigned long long>(v[0]) * v[2] * v[4] * v[6] != static_cast<unsigned long long>(c.nodes))
    return Status::InvalidArgument("cluster.network.dragonfly: \"" + c.network.dragonfly +
                                   "\" does not describe cluster.nodes = " + std::to_string(c.nodes) + " servers");
  const NetworkSpec& n = c.network;
  auto netpoint = [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    Server s = build_server(c, zone, static_cast<int>(id), out);
    return std::make_pair(s.zone->get_netpoint(), s.gateway);
  };
  sg4::create_dragonfly_zone("dragonfly", nullptr, sg4::DragonflyParams({v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, v[6]),
                             sg4::ClusterCallbacks(netpoint), n.bandwidth * n.effective_efficiency(),
                             n.latency / 2 + n.effective_overhead() / 2, sg4::Link::SharingPolicy::SPLITDUPLEX)
      ->seal();
  return Status::OK();
}

}  // namespace

Status load_platform_file(const ClusterSpec& c, BuiltPlatform* out) {
  sg4::Engine* e = sg4::Engine::get_instance();
  try {
    e->load_platform(c.platform_file);
  } catch (const std::exception& ex) {
    return Status::InvalidArgument("cluster.platform_file: \"" + c.platform_file.substr(0, 60) +
                                   "\" could not be loaded: " + std::string(ex.what()).substr(0, 200));
  }
  std::vector<sg4::Host*> hosts = e->get_all_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](sg4::Host* a, sg4::Host* b) { return a->get_name() < b->get_name(); });
  std::map<std::string, int> zones;
  for (sg4::Host* h : hosts) {
    const std::string z = h->get_englobing_zone()->get_name();
    auto it = zones.emplace(z, static_cast<int>(zones.size())).first;
    out->gpus.push_back(h);
    out->node_of.push_back(it->second);
  }
  return Status::OK();
}

double intra_bandwidth(const ClusterSpec& c) {
  if (c.intra.bandwidth > 0) return c.intra.bandwidth;
  auto g = workloads::find_gpu(c.gpu);
  if (!g) return 12e9;
  const double gbps = c.intra.type == "nvlink" && g->nvlink_gbps > 0 ? g->nvlink_gbps : g->pcie_gbps;
  return gbps * 1e9;
}

Status build_platform(const ClusterSpec& c, BuiltPlatform* out) {
  *out = BuiltPlatform{};
  if (!c.platform_file.empty()) return load_platform_file(c, out);
  const std::string& t = c.network.topology;
  if (t == "star") return build_star(c, out);
  if (t == "fat_tree") return build_fat_tree(c, out);
  if (t == "torus") return build_torus(c, out);
  if (t == "dragonfly") return build_dragonfly(c, out);
  return Status::InvalidArgument("cluster.network.topology: \"" + t +
                                 "\" is not a topology (star, fat_tree, torus)");
}

}  // namespace hvd::sim
