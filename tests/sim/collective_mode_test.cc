// hvdsim --collective (simulator/tools/collective_mode.cc): every collective in nccl-tests'
// columns, raw beside hvd, the report, the flags a mode does not use, and GPU collectives on
// the NCCL model in the runtime (runtime.gpu_operations "nccl").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_hvdsim.h"

namespace hvd::sim {
namespace {

namespace fs = std::filesystem;
const std::string kH100 = std::string(HVD_SOURCE_DIR) + "/scenarios/dgx_h100.json";

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f, nullptr, false);
}

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("hvdsim_coll_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir); }
  ~TempDir() { fs::remove_all(dir); }
};

// Every collective runs at 2 nodes with both columns; the report holds every size with the
// raw algorithm; hvd through the runtime is never faster than the collective alone.
TEST(CollectiveMode, EveryCollectiveWithReport) {
  TempDir t;
  for (const char* coll : {"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"}) {
    const fs::path report = t.dir / (std::string(coll) + ".json");
    std::string err;
    ASSERT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=2 --collective " + coll +
                             " -b 64K -e 16M -f 16 -n 2 -w 1 --report " + report.string(), &err), 0)
        << coll << ": " << err;
    const auto j = read_json(report);
    ASSERT_TRUE(j.is_object()) << coll;
    EXPECT_EQ(j["collective"], coll);
    EXPECT_EQ(j["np"], 16);
    ASSERT_EQ(j["rows"].size(), 3u) << coll;  // 64K, 1M, 16M
    for (const auto& r : j["rows"]) {
      EXPECT_GT(r["raw"]["time_s"].get<double>(), 0) << coll;
      EXPECT_FALSE(r["raw"]["algorithm"].get<std::string>().empty());
      EXPECT_GE(r["hvd"]["time_s"].get<double>(), r["raw"]["time_s"].get<double>()) << coll << " " << r["bytes"];
    }
    std::ifstream csv(t.dir / (std::string(coll) + ".csv"));
    std::string header, line;
    std::getline(csv, header);
    EXPECT_EQ(header.rfind("bytes,count,raw_time_s", 0), 0u) << header;
    int lines = 0;
    while (std::getline(csv, line)) ++lines;
    EXPECT_EQ(lines, 3) << coll;
  }
}

// The Blackwell scenarios through the command: one GB200 NVL72 rack (72 GPUs, one NVLink
// domain over 18 trays) and two DGX B200 nodes, every collective, report rows with bytes and
// raw.busbw_gbps; the same command twice gives the same report, bit for bit.
TEST(CollectiveMode, BlackwellScenariosEveryCollective) {
  TempDir t;
  const std::string dir = std::string(HVD_SOURCE_DIR) + "/scenarios/";
  for (const auto& [file, np] : {std::pair<std::string, int>{"gb200_nvl72.json", 72}, {"dgx_b200.json", 16}}) {
    for (const char* coll : {"allreduce", "allgather", "reducescatter", "alltoall"}) {
      std::string reports[2];
      for (int k = 0; k < 2; ++k) {
        const fs::path report = t.dir / (std::string(coll) + std::to_string(k) + ".json");
        std::string err;
        ASSERT_EQ(run_hvdsim(dir + file + " -q --collective " + coll + " --np " + std::to_string(np) +
                                 " -b 16M -e 1G -f 8 --raw-only --report " + report.string(), &err), 0)
            << file << " " << coll << ": " << err;
        std::ifstream f(report);
        reports[k].assign(std::istreambuf_iterator<char>(f), {});
        const auto j = nlohmann::json::parse(reports[k], nullptr, false);
        ASSERT_TRUE(j.is_object()) << coll;
        EXPECT_EQ(j["np"], np);
        ASSERT_EQ(j["rows"].size(), 3u) << coll;  // 16M, 128M, 1G
        double last = 0;
        for (const auto& r : j["rows"]) {
          const double bw = r["raw"]["busbw_gbps"].get<double>();
          EXPECT_GT(r["bytes"].get<double>(), 0);
          EXPECT_GT(bw, last) << file << " " << coll;  // bus bandwidth climbs with size
          EXPECT_LT(bw, 1200) << file << " " << coll;   // and stays below NVLink 5's 1.8 TB/s both ways
          last = bw;
        }
      }
      EXPECT_EQ(reports[0], reports[1]) << file << " " << coll;
    }
  }
}

// One H100 node: NCCL's tuner takes NVLS for large allreduces, a ring when NCCL_ALGO says so;
// --raw-only prints no hvd column.
TEST(CollectiveMode, NcclAlgoAndRawOnly) {
  std::string out, err;
  ASSERT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --collective allreduce -b 1G -e 1G --raw-only", &err, &out), 0) << err;
  EXPECT_NE(out.find("nvls/Simple"), std::string::npos) << out;
  EXPECT_EQ(out.find("hvd (us)"), std::string::npos) << out;
  ASSERT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --set runtime.nccl_algo=ring --collective allreduce -b 1G -e 1G --raw-only",
                       &err, &out), 0) << err;
  EXPECT_NE(out.find("ring/Simple"), std::string::npos) << out;
  // NCCL_PROTO: the ring on LL128 at 1 GiB, named in the header.
  ASSERT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --set runtime.nccl_algo=ring --set runtime.nccl_proto=LL128"
                               " --collective allreduce -b 1G -e 1G --raw-only",
                       &err, &out), 0) << err;
  EXPECT_NE(out.find("ring/LL128"), std::string::npos) << out;
  EXPECT_NE(out.find("NCCL_PROTO LL128"), std::string::npos) << out;
  // Any case, as NCCL reads NCCL_PROTO; the header shows NCCL's spelling.
  ASSERT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --set runtime.nccl_algo=ring --set runtime.nccl_proto=simple"
                               " --collective allreduce -b 1G -e 1G --raw-only",
                       &err, &out), 0) << err;
  EXPECT_NE(out.find("ring/Simple"), std::string::npos) << out;
  EXPECT_NE(out.find("NCCL_PROTO Simple"), std::string::npos) << out;
}

// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS: named in the header and the report, the calls run
// on that many channels, and one channel of a node's 24 takes far longer for a 1 GiB ring.
TEST(CollectiveMode, NcclChannels) {
  TempDir t;
  const std::string ring = kH100 + " -q --set cluster.nodes=1 --set runtime.nccl_algo=ring --collective allreduce -b 1G -e 1G --raw-only";
  auto time_of = [&](const std::string& set, int* channels, std::string* out) {
    const fs::path report = t.dir / "ch.json";
    std::string err;
    EXPECT_EQ(run_hvdsim(ring + set + " --report " + report.string(), &err, out), 0) << err;
    const auto j = read_json(report);
    if (!j.is_object() || j["rows"].empty()) return -1.0;
    *channels = j["rows"][0]["raw"]["channels"].get<int>();
    return j["rows"][0]["raw"]["time_s"].get<double>();
  };
  std::string out;
  int ch = 0;
  const double t24 = time_of("", &ch, &out);
  EXPECT_EQ(ch, 24);
  EXPECT_EQ(out.find("NCCL_MAX_NCHANNELS"), std::string::npos) << out;
  const double t1 = time_of(" --set runtime.nccl_max_nchannels=1", &ch, &out);
  EXPECT_EQ(ch, 1);
  EXPECT_NE(out.find("NCCL_MAX_NCHANNELS 1"), std::string::npos) << out;
  EXPECT_GT(t1, 20 * t24);
  EXPECT_EQ(read_json(t.dir / "ch.json")["nccl_max_nchannels"], 1);
  time_of(" --set runtime.nccl_min_nchannels=32", &ch, &out);
  EXPECT_EQ(ch, 32);
  EXPECT_NE(out.find("NCCL_MIN_NCHANNELS 32"), std::string::npos) << out;
  // On a scenario whose GPU collectives are the runtime's own, NCCL's variables shape the raw
  // column only; the hvd column runs as before.
  std::string err;
  ASSERT_EQ(run_hvdsim(std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json -q --set runtime.nccl_max_nchannels=1"
                           " --collective allreduce -b 1M -e 1M --np 8 -n 1 -w 0", &err, &out), 0) << err;
  EXPECT_NE(out.find("NCCL_MAX_NCHANNELS 1"), std::string::npos) << out;
}

// -g N, as nccl-tests: one host thread launches N GPUs' kernels, so a small call costs the
// thread's launch (33.3 us on 8 GPUs) instead of NCCL's own latency; large calls barely move.
TEST(CollectiveMode, GpusPerThreadAsNcclTests) {
  TempDir t;
  auto row = [&](const std::string& extra, const std::string& b) {
    const fs::path report = t.dir / "g.json";
    std::string err, out;
    EXPECT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --set runtime.nccl_algo=ring --collective allreduce -b " + b +
                             " -e " + b + " --raw-only --report " + report.string() + extra, &err, &out), 0) << err;
    return read_json(report);
  };
  const auto one = row("", "8"), eight = row(" -g 8", "8");
  EXPECT_EQ(one["gpus_per_thread"], 1);
  EXPECT_EQ(eight["gpus_per_thread"], 8);
  const double t1 = one["rows"][0]["raw"]["time_s"].get<double>(), t8 = eight["rows"][0]["raw"]["time_s"].get<double>();
  EXPECT_NEAR(t8 * 1e6, 5.56 + 7 * 3.96, 0.05);
  EXPECT_LT(t1, 0.6 * t8);
  const double big1 = row("", "1G")["rows"][0]["raw"]["time_s"].get<double>();
  const double big8 = row(" -g 8", "1G")["rows"][0]["raw"]["time_s"].get<double>();
  EXPECT_GE(big8, big1);
  EXPECT_LT(big8, 1.01 * big1);
}

// -d / -o, as nccl-tests: the element type sets the count (the size stays bytes), the raw time
// depends on bytes alone, and the hvd column runs the runtime on that type and reduction.
TEST(CollectiveMode, DatatypeAndOpAsNcclTests) {
  TempDir t;
  auto report = [&](const std::string& extra) {
    const fs::path path = t.dir / "d.json";
    std::string err, out;
    EXPECT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=1 --collective allreduce -b 1M -e 1M -n 2 -w 1 --report " +
                             path.string() + extra, &err, &out), 0) << err;
    return read_json(path);
  };
  const auto f = report(""), h = report(" -d half -o max"), d = report(" -d double -o prod");
  EXPECT_EQ(f["type"], "float");
  EXPECT_EQ(h["type"], "half");
  EXPECT_EQ(h["redop"], "max");
  EXPECT_EQ(f["rows"][0]["count"].get<int64_t>(), 262144);
  EXPECT_EQ(h["rows"][0]["count"].get<int64_t>(), 524288);
  EXPECT_EQ(d["rows"][0]["count"].get<int64_t>(), 131072);
  EXPECT_DOUBLE_EQ(h["rows"][0]["raw"]["time_s"].get<double>(), f["rows"][0]["raw"]["time_s"].get<double>());
  EXPECT_GT(h["rows"][0]["hvd"]["time_s"].get<double>(), 0);
  std::string err;
  EXPECT_EQ(run_hvdsim(kH100 + " -q --collective allreduce --raw-only -d float17", &err), 2);
  EXPECT_NE(err.find("--datatype"), std::string::npos) << err;
  EXPECT_EQ(run_hvdsim(kH100 + " -q -o max", &err), 2);
  EXPECT_NE(err.find("--op: applies to --collective only"), std::string::npos) << err;
}

// A flag the mode does not use, an algorithm that cannot run, a bad scenario value: one line,
// exit 2.
TEST(CollectiveMode, RefusesWhatItWouldIgnore) {
  const std::string one = kH100 + " --set cluster.nodes=1";
  struct {
    std::string args, expected;
  } cases[] = {
      {one + " -b 1M", "hvdsim: --minbytes: applies to --collective only"},
      {one + " --raw-only", "hvdsim: --raw-only: applies to --collective only"},
      {one + " --collective allreduce --with-data", "hvdsim: --with-data: not with --collective"},
      {one + " --collective allreduce --timeline-dir /tmp/x", "hvdsim: --timeline-dir: not with --collective"},
      {one + " --collective allreduce --sweep", "hvdsim: --sweep: not with --collective"},
      {one + " --collective allreduce -j 2", "hvdsim: --parallel: not with --collective"},
      {one + " --collective allreduce --raw-only -n 5", "hvdsim: --raw-only: no runtime calls to time"},
      {one + " --collective allreduce -e 1000000TiB", "hvdsim: --maxbytes: 1000000TiB is larger than 64 GiB"},
      {one + " -g 2", "hvdsim: --ngpus: applies to --collective only"},
      {one + " --collective allreduce --raw-only -g 9", "hvdsim: --ngpus: 9 GPUs per thread, but a node runs 8 ranks"},
      {one + " --set runtime.nccl_algo=collnet --collective allreduce", "hvdsim: runtime.nccl_algo: collnet cannot run allreduce"},
      {one + " --set runtime.nccl_algo=tree --collective broadcast", "hvdsim: runtime.nccl_algo: tree cannot run broadcast"},
      {one + " --set runtime.nccl_algo=fast", "runtime.nccl_algo: \"fast\" is not one of auto, ring, tree, nvls, nvls_tree, collnet, pat"},
      {one + " --set runtime.nccl_proto=LL128 --collective alltoall", "hvdsim: runtime.nccl_algo: auto with runtime.nccl_proto LL128 cannot run alltoall"},
      {one + " --set runtime.nccl_algo=nvls --set runtime.nccl_proto=LL --collective allreduce", "hvdsim: runtime.nccl_algo: nvls with runtime.nccl_proto LL cannot run allreduce"},
      {kH100 + " -q --set cluster.nodes=2 --set 'workload.models=[\"resnet50\"]' --set runtime.nccl_algo=collnet",
       "runtime.nccl_algo: collnet cannot run allreduce on 1 node(s) of 8 GPUs"},
      {kH100 + " -q --set cluster.nodes=2 --set 'workload.models=[\"resnet50\"]' --set 'sweep.np=[16]' --set runtime.nccl_algo=nvls_tree --set runtime.nccl_proto=LL128",
       "runtime.nccl_algo: nvls_tree with runtime.nccl_proto LL128 cannot run allreduce on 2 node(s)"},
      {one + " --collective allgatherv", "hvdsim: --collective: allgatherv not in {allreduce,allgather,reducescatter,broadcast,alltoall}"},
      {one + " --collective alltoall -b 4 -e 1M --raw-only", "hvdsim: --minbytes: 4 is below one 4-byte element a rank for alltoall on 8 ranks (at least 32 bytes)"},
      {one + " --set runtime.nccl_algo=pat --collective allgather", "hvdsim: runtime.nccl_algo: pat cannot run allgather"},
      {one + " --set runtime.nccl_proto=LL256", "runtime.nccl_proto: \"LL256\" is not one of auto, LL, LL128, Simple"},
      {std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json -q --set 'sweep.np=[2]' --set 'workload.models=[\"resnet50\"]' --set runtime.nccl_algo=ring",
       "runtime.nccl_algo: applies to NCCL's collectives (runtime.gpu_operations \"nccl\")"},
      {std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json -q --set 'sweep.np=[2]' --set 'workload.models=[\"resnet50\"]' --set runtime.nccl_max_nchannels=4",
       "runtime.nccl_max_nchannels: applies to NCCL's collectives"},
      {one + " --set runtime.nccl_min_nchannels=65", "runtime.nccl_min_nchannels: 65 is not an integer from 0 to 64"},
      {one + " --set runtime.nccl_max_nchannels=0", "runtime.nccl_max_nchannels: 0 is not an integer from 1 to 64"},
      {one + " --set runtime.nccl_max_nchannels=2.5", "runtime.nccl_max_nchannels: 2.5 is not an integer from 1 to 64"},
      {one + " --set runtime.nccl_min_nchannels=many", "runtime.nccl_min_nchannels: \"many\" is not an integer from 0 to 64"},
      {one + " --set runtime.gpu_operations=mpi", "runtime.gpu_operations: \"mpi\" is not \"nccl\""},
      {one + " --set cluster.host_cpu=arm", "cluster.host_cpu"},
      {one + " --set cluster.nvlink_domain_nodes=2 --set cluster.intra_node.type=pcie",
       "cluster.nvlink_domain_nodes: 2 servers share an NVLink domain, but cluster.intra_node.type is \"pcie\""},
      {one + " --set cluster.network.sharp=yes", "cluster.network.sharp"},
      {one + " --set cluster.network.protocol=tcp --set cluster.network.sharp=true",
       "cluster.network.sharp: SHARP is InfiniBand switches' in-network reduction; this network's protocol is tcp"},
      {one + " --set runtime.nccl_algo=ring --collective alltoall", "runtime.nccl_algo: ring cannot run alltoall"},
      {one + " --collective broadcast -o prod", "hvdsim: --op: broadcast does not reduce"},
      {one + " --collective allgather -o max", "hvdsim: --op: allgather does not reduce"},
      {one + " --collective allreduce --raw-only -g 3", "hvdsim: --ngpus: 3 does not divide the 8 ranks of a node"},
      {one + " --collective allreduce -b abc", "hvdsim: --minbytes: 'abc' is not a size (e.g. 8, 4K, 64MiB, 1G)"},
      {one + " --collective allreduce -e 1P", "hvdsim: --maxbytes: '1P' is not a size"},
      {one + " --collective allreduce -b 1M -e 1K", "hvdsim: --minbytes: 1M is larger than --maxbytes 1K"},
      {one + " --collective allreduce -b 2", "hvdsim: --minbytes: 2 is below 4 bytes"},
      {one + " --collective allreduce -f 1", "hvdsim: --stepfactor: Value 1 not in range 2 to 1073741824"},
      {one + " --collective allreduce --set workload.optimizer=lamb",
       "hvdsim: --set workload.optimizer: not with --collective (a collective sweep runs no workload)"},
      {std::string(HVD_SOURCE_DIR) + "/scenarios/whatif_straggler.json --collective allreduce",
       "describes 4 clusters or runtimes (what_if entries or sweep axes); a collective sweep runs one"},
      // What NCCL's model does not price is refused on NCCL's collectives, not ignored.
      {kH100 + " --set cluster.nodes=2 --collective allreduce --raw-only --set 'cluster.degraded_links=[{\"node\": 1, \"extra_latency\": \"5us\"}]'",
       "cluster.degraded_links: extra_latency is not modelled for NCCL's collectives"},
      {kH100 + " --set cluster.nodes=2 --collective allreduce --raw-only --set cluster.network.topology=fat_tree"
               " --set cluster.network.oversubscription=2",
       "cluster.network.topology: NCCL's collectives (runtime.gpu_operations \"nccl\") are modelled on a non-blocking fabric"},
      {kH100 + " -q --set cluster.nodes=2 --set 'workload.models=[\"resnet50\"]' --set runtime.hierarchical_allreduce=true",
       "runtime.hierarchical_allreduce: not with NCCL's allreduce"},
      {kH100 + " -q --set cluster.nodes=2 --set 'workload.models=[\"resnet50\"]' --set runtime.allreduce_algorithm=rhd",
       "runtime.allreduce_algorithm: \"rhd\" is the runtime's own allreduce, which would replace NCCL's"},
      {std::string(HVD_SOURCE_DIR) + "/scenarios/h100_ib400.json -q --set 'sweep.np=[8]' --set cluster.network.sharp=true",
       "cluster.network.sharp: applies to NCCL's collectives (runtime.gpu_operations \"nccl\")"},
  };
  for (const auto& c : cases) {
    std::string err;
    EXPECT_EQ(run_hvdsim(c.args, &err), 2) << c.args << ": " << err;
    EXPECT_NE(err.find(c.expected), std::string::npos) << c.args << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// A degraded NIC (or GPU link) slows every channel: each ring crosses every node of the job,
// so the slowest link sets the rate; a node outside the job changes nothing.
TEST(CollectiveMode, ADegradedLinkSlowsEveryChannelOfTheJob) {
  const std::string two = kH100 + " -q --set cluster.nodes=4 --set runtime.nccl_algo=ring --collective allreduce -b 1G -e 1G --raw-only --np 16";
  auto busbw = [&](const std::string& set) {
    std::string err, out;
    EXPECT_EQ(run_hvdsim(two + set, &err, &out), 0) << err;
    std::istringstream in(out);
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') last = line;
    std::istringstream w(last);
    std::string f[8];
    for (auto& x : f) w >> x;
    return std::atof(f[7].c_str());
  };
  const double base = busbw("");
  const double half_nic = busbw(" --set 'cluster.degraded_links=[{\"node\": 1, \"bandwidth_factor\": 0.5}]'");
  const double two_nics = busbw(" --set 'cluster.degraded_links=[{\"node\": 0, \"bandwidth_factor\": 0.5}, {\"node\": 1, \"bandwidth_factor\": 0.5}]'");
  const double outside = busbw(" --set 'cluster.degraded_links=[{\"node\": 3, \"bandwidth_factor\": 0.5}]'");
  const double nvlink = busbw(" --set 'cluster.degraded_links=[{\"node\": 0, \"gpu\": 2, \"bandwidth_factor\": 0.05}]'");
  EXPECT_GT(base, 300) << base;
  EXPECT_NEAR(half_nic / base, 0.5, 0.05) << half_nic << " vs " << base;
  EXPECT_EQ(two_nics, half_nic);  // the slowest link, not the product
  EXPECT_EQ(outside, base);
  EXPECT_LT(nvlink, 0.5 * base) << nvlink;  // NVLink at a twentieth is below the NICs' rate
}

// The runtime's GPU allreduce on NCCL: a training step on gpu_operations "nccl" spends its
// communication in NCCL calls timed by the model, so a step differs from the same step on
// the runtime's own ring; both finish. sweep.np "nodes" follows cluster.nodes.
TEST(CollectiveMode, TrainingRunsOnTheNcclModel) {
  TempDir t;
  auto run = [&](const std::string& ops) {
    const fs::path report = t.dir / (ops + ".json");
    std::string err;
    EXPECT_EQ(run_hvdsim(kH100 + " -q --set cluster.nodes=2 --set 'workload.models=[\"resnet50\"]' --set runtime.gpu_operations=" +
                             ops + " --report " + report.string(), &err), 0) << err;
    return read_json(report);
  };
  const auto nccl = run("nccl"), own = run("hvd");
  ASSERT_TRUE(nccl.is_object() && own.is_object());
  ASSERT_EQ(nccl["runs"].size(), 3u);  // np 1, 8, 16
  EXPECT_EQ(nccl["runs"][2]["np"], 16);
  const double a = nccl["runs"][2]["step_time_s"], b = own["runs"][2]["step_time_s"];
  EXPECT_GT(a, 0);
  EXPECT_NE(a, b);
}

// workload.accumulation_steps K: K-1 micro-batches accumulate locally, the K-th allreduces.
// One GPU's rate per sample stays; a communication-bound model scales better; a step holds
// K micro-batches of compute.
TEST(CollectiveMode, AccumulationStepsAmortiseTheAllreduce) {
  TempDir t;
  auto run = [&](int k) {
    const fs::path report = t.dir / ("k" + std::to_string(k) + ".json");
    std::string err;
    EXPECT_EQ(run_hvdsim(std::string(HVD_SOURCE_DIR) + "/scenarios/roce25.json -q --set 'workload.models=[\"vgg16\"]' "
                             "--set 'sweep.np=[16]' --set workload.accumulation_steps=" + std::to_string(k) +
                             " --report " + report.string(), &err), 0) << err;
    const auto j = read_json(report);
    return j.is_object() && j["runs"].size() == 1 ? j["runs"][0] : nlohmann::json();
  };
  const auto one = run(1), four = run(4);
  ASSERT_FALSE(one.is_null());
  ASSERT_FALSE(four.is_null());
  EXPECT_NEAR(four["images_per_sec_single"].get<double>(), one["images_per_sec_single"].get<double>(),
              0.01 * one["images_per_sec_single"].get<double>());
  EXPECT_GT(four["scaling_efficiency"].get<double>(), one["scaling_efficiency"].get<double>() + 0.02);
  EXPECT_NEAR(four["compute_s"].get<double>(), 4 * one["compute_s"].get<double>(), 0.02 * four["compute_s"].get<double>());
  std::string err;
  EXPECT_EQ(run_hvdsim(kH100 + " --set workload.accumulation_steps=0", &err), 2);
  EXPECT_NE(err.find("workload.accumulation_steps"), std::string::npos) << err;
}

// workload.allreduce_post_accumulation: every gradient waits for the end of the last backward
// pass, so nothing hides the allreduce (NVIDIA's BERT scripts' --allreduce_post_accumulation).
TEST(CollectiveMode, PostAccumulationExposesTheAllreduce) {
  TempDir t;
  auto run = [&](bool post) {
    const fs::path report = t.dir / (post ? "post.json" : "during.json");
    std::string err;
    EXPECT_EQ(run_hvdsim(std::string(HVD_SOURCE_DIR) + "/scenarios/dgx_a100.json -q --set cluster.nodes=4 "
                             "--set 'workload.models=[\"bert-large\"]' --set 'sweep.np=[32]' --set workload.accumulation_steps=2 "
                             "--set workload.allreduce_post_accumulation=" + std::string(post ? "true" : "false") +
                             " --report " + report.string(), &err), 0) << err;
    const auto j = read_json(report);
    return j.is_object() && j["runs"].size() == 1 ? j["runs"][0] : nlohmann::json();
  };
  const auto during = run(false), post = run(true);
  ASSERT_FALSE(during.is_null());
  ASSERT_FALSE(post.is_null());
  EXPECT_NEAR(post["compute_s"].get<double>(), during["compute_s"].get<double>(), 1e-3 * during["compute_s"].get<double>());
  // 672 MB of fp16 gradients over 4 x 8 HDR: several ms, all of it after the backward pass.
  EXPECT_GT(post["exposed_comm_s"].get<double>(), during["exposed_comm_s"].get<double>() + 2e-3);
  EXPECT_LT(post["scaling_efficiency"].get<double>(), during["scaling_efficiency"].get<double>());
  std::string err;
  EXPECT_EQ(run_hvdsim(kH100 + " --set workload.allreduce_post_accumulation=yes", &err), 2);
  EXPECT_NE(err.find("workload.allreduce_post_accumulation"), std::string::npos) << err;
}

// workload.optimizer: the update's memory traffic beyond plain SGD's, once per step (not per
// micro-batch): LAMB over BERT-Large's 336 M parameters on an A100, 28 bytes more each.
TEST(CollectiveMode, OptimizerUpdateOncePerStep) {
  TempDir t;
  auto run = [&](const std::string& opt, int k) {
    const fs::path report = t.dir / (opt + std::to_string(k) + ".json");
    std::string err;
    EXPECT_EQ(run_hvdsim(std::string(HVD_SOURCE_DIR) + "/scenarios/dgx_a100.json -q --set cluster.nodes=1 "
                             "--set 'workload.models=[\"bert-large\"]' --set 'sweep.np=[8]' --set workload.optimizer=" + opt +
                             " --set workload.accumulation_steps=" + std::to_string(k) + " --report " + report.string(), &err), 0)
        << err;
    const auto j = read_json(report);
    return j.is_object() && j["runs"].size() == 1 ? j["runs"][0]["compute_s"].get<double>() : -1.0;
  };
  const double lamb_extra = 336226108 * 28.0 / 2039e9;
  EXPECT_NEAR(run("lamb", 1) - run("sgd", 1), lamb_extra, 0.05 * lamb_extra);
  EXPECT_NEAR(run("lamb", 4) - run("sgd", 4), lamb_extra, 0.05 * lamb_extra);
  std::string err;
  EXPECT_EQ(run_hvdsim(kH100 + " --set workload.optimizer=adagrad", &err), 2);
  EXPECT_NE(err.find("workload.optimizer"), std::string::npos) << err;
}

}  // namespace
}  // namespace hvd::sim
