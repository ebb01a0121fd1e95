#include "collective_mode.h"

#include <cstdio>
#include <sstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/units.h"
#include "hvd/sim/collective_sweep.h"
#include "hvd/report/report.h"
#include "hvd/sim/nccl_model.h"

namespace hvd::sim {
namespace {

// nccl-tests' -d / -o names (the command line admits only those the runtime reads too).
DataType dtype_of(const std::string& d) { return parse_dtype(d).value_or(DataType::kFloat32); }
ReduceOp op_of(const std::string& o) { return parse_op(o).value_or(ReduceOp::kSum); }
bool reduces(NcclColl c) { return c == NcclColl::kAllreduce || c == NcclColl::kReducescatter; }

struct Row {
  int64_t bytes = 0, count = 0;
  NcclCall raw;
  double hvd_s = -1;  // < 0: not simulated (--raw-only)
};

double gbps(double bytes, double s) { return s > 0 ? bytes / s / 1e9 : 0; }

std::string algorithm(const NcclCall& c, NcclColl coll) {
  if (coll == NcclColl::kAlltoall) return "p2p";
  return std::string(nccl_algo_name(c.algo)) + "/" + nccl_proto_name(c.proto);
}

void print(const Scenario& sc, const CollectiveArgs& a, NcclColl coll, const NcclMachine& m, const std::vector<Row>& rows,
           const NcclSettings& nccl) {
  const int np = m.ranks();
  const bool reducing = reduces(coll);
  std::printf("# hvdsim --collective %s: %s, %d ranks (%d nodes x %d), %s%s%s\n", a.collective.c_str(),
              sc.source.c_str(), np, m.nodes, m.ranks_per_node, a.datatype.c_str(), reducing ? " " : "",
              reducing ? a.op.c_str() : "");
  std::printf("# raw: NCCL as its tuner picks it, on the model's clock (NCCL_ALGO %s, NCCL_PROTO %s, ", nccl.algo_name(),
              nccl.proto_name());
  if (m.gpus_per_thread > 1) std::printf("-g %d: one thread launches %d GPUs' kernels, ", m.gpus_per_thread, m.gpus_per_thread);
  if (m.min_channels > 0) std::printf("NCCL_MIN_NCHANNELS %d, ", m.min_channels);
  if (m.max_channels < 64) std::printf("NCCL_MAX_NCHANNELS %d, ", m.max_channels);
  std::printf("docs/nccl_model.md)");
  if (a.raw_only) std::printf("\n");
  else std::printf("; hvd: the runtime API, %d iterations after %d, slowest rank\n", a.iters, a.warmup);
  std::printf("# %11s %12s %8s %6s %5s  %10s %8s %8s %-16s %3s", "size (B)", "count", "type", "redop", "root",
              "time (us)", "algbw", "busbw", "algorithm", "ch");
  if (!a.raw_only) std::printf("  %10s %8s %8s", "hvd (us)", "algbw", "busbw");
  std::printf("\n");
  const double f = nccl_bus_factor(coll, np);
  for (const Row& r : rows) {
    const double b = static_cast<double>(r.bytes);
    std::printf("  %11lld %12lld %8s %6s %5d  %10.1f %8.2f %8.2f %-16s %3d", static_cast<long long>(r.bytes),
                static_cast<long long>(r.count), a.datatype.c_str(), reducing ? a.op.c_str() : "none",
                coll == NcclColl::kBroadcast ? 0 : -1, r.raw.seconds * 1e6, gbps(b, r.raw.seconds),
                gbps(b, r.raw.seconds) * f, algorithm(r.raw, coll).c_str(), r.raw.channels);
    if (r.hvd_s >= 0) std::printf("  %10.1f %8.2f %8.2f", r.hvd_s * 1e6, gbps(b, r.hvd_s), gbps(b, r.hvd_s) * f);
    std::printf("\n");
  }
}

// {"collective", "np", "rows": [{"bytes", "hvd": {...}, "raw": {...}}]} and the CSV beside it.
Status write_report(const std::string& path, const Scenario& sc, const CollectiveArgs& a, NcclColl coll,
                    const NcclMachine& m, const std::vector<Row>& rows, const NcclSettings& nccl) {
  const double f = nccl_bus_factor(coll, m.ranks());
  nlohmann::json j = {{"collective", a.collective}, {"np", m.ranks()}, {"nodes", m.nodes},
                      {"scenario", sc.source}, {"nccl_algo", nccl.algo_name()}, {"nccl_proto", nccl.proto_name()},
                      {"nccl_min_nchannels", m.min_channels}, {"nccl_max_nchannels", m.max_channels},
                      {"gpus_per_thread", m.gpus_per_thread}, {"type", a.datatype},
                      {"redop", reduces(coll) ? a.op : "none"},
                      {"rows", nlohmann::json::array()}};
  std::ostringstream csv;
  csv << "bytes,count,raw_time_s,raw_algbw_gbps,raw_busbw_gbps,algorithm,protocol,channels,hvd_time_s,hvd_algbw_gbps,hvd_busbw_gbps\n";
  for (const Row& r : rows) {
    const double b = static_cast<double>(r.bytes);
    const std::string proto = coll == NcclColl::kAlltoall ? "Simple" : nccl_proto_name(r.raw.proto);
    const std::string alg = coll == NcclColl::kAlltoall ? "p2p" : nccl_algo_name(r.raw.algo);
    nlohmann::json row = {{"bytes", r.bytes}, {"count", r.count},
                          {"raw", {{"time_s", r.raw.seconds}, {"algbw_gbps", gbps(b, r.raw.seconds)},
                                   {"busbw_gbps", gbps(b, r.raw.seconds) * f}, {"algorithm", alg},
                                   {"protocol", proto}, {"channels", r.raw.channels}}}};
    if (r.hvd_s >= 0)
      row["hvd"] = {{"time_s", r.hvd_s}, {"algbw_gbps", gbps(b, r.hvd_s)}, {"busbw_gbps", gbps(b, r.hvd_s) * f}};
    j["rows"].push_back(row);
    csv << r.bytes << "," << r.count << "," << r.raw.seconds << "," << gbps(b, r.raw.seconds) << ","
        << gbps(b, r.raw.seconds) * f << "," << alg << "," << proto << "," << r.raw.channels << ",";
    if (r.hvd_s >= 0) csv << r.hvd_s << "," << gbps(b, r.hvd_s) << "," << gbps(b, r.hvd_s) * f;
    else csv << ",,";
    csv << "\n";
  }
  return report::write_report_files(path, j.dump(2) + "\n", csv.str());
}

// The collective and the sizes of the sweep from the command line: 0, or the exit code after
// saying what is wrong.
int read_sweep(const CollectiveArgs& a, NcclColl* coll, std::vector<int64_t>* sizes) {
  if (!parse_nccl_coll(a.collective, coll)) {
    std::string names;
    for (const std::string& n : nccl_coll_names()) names += (names.empty() ? "" : ", ") + n;
    std::cerr << "hvdsim: --collective: '" << a.collective << "' is not one of " << names << "\n";
    return 2;
  }
  if (a.op_given && !reduces(*coll)) {
    std::cerr << "hvdsim: --op: " << a.collective << " does not reduce\n";
    return 2;
  }
  const auto lo = parse_sweep_size(a.min_b), hi = parse_sweep_size(a.max_b);
  const std::string why = !lo          ? "--minbytes: '" + a.min_b + "' is not a size (e.g. 8, 4K, 64MiB, 1G)"
                          : !hi        ? "--maxbytes: '" + a.max_b + "' is not a size (e.g. 8, 4K, 64MiB, 1G)"
                          : *lo < 4    ? "--minbytes: " + a.min_b + " is below 4 bytes, the smallest size a sweep takes"
                          : *lo > *hi  ? "--minbytes: " + a.min_b + " is larger than --maxbytes " + a.max_b
                          : a.factor < 2 ? "--stepfactor: " + std::to_string(a.factor) + " is below 2"
                                         : "";
  if (!why.empty()) {
    std::cerr << "hvdsim: " << why << "\n";
    return 2;
  }
  constexpr int64_t kMaxSweepBytes = int64_t{64} << 30;  // nccl-tests' largest sizes are 16 GiB
  if (*hi > kMaxSweepBytes) {
    std::cerr << "hvdsim: --maxbytes: " << a.max_b << " is larger than 64 GiB, the largest size a sweep takes\n";
    return 2;
  }
  for (int64_t s = *lo; s <= *hi; s *= a.factor) {
    sizes->push_back(s);
    if (s > *hi / a.factor) break;
  }
  return 0;
}

// The machine of the raw column (np ranks of the point's cluster, nccl-tests' -g threads),
// where NCCL's settings can run `coll`: 0, or the exit code after saying why not.
int raw_machine(const ScenarioPoint& pt, const CollectiveArgs& a, NcclColl coll, int np, NcclMachine* out) {
  auto machine = nccl_machine(pt.cluster, np, pt.nccl);
  if (!machine.ok()) {
    std::cerr << "hvdsim: " << machine.status().message() << "\n";
    return 2;
  }
  if (a.gpus_per_thread > machine->ranks_per_node) {
    std::cerr << "hvdsim: --ngpus: " << a.gpus_per_thread << " GPUs per thread, but a node runs "
              << machine->ranks_per_node << (machine->ranks_per_node == 1 ? " rank" : " ranks")
              << " (nccl-tests -g drives GPUs of one node)\n";
    return 2;
  }
  if (machine->ranks_per_node % a.gpus_per_thread != 0) {
    std::cerr << "hvdsim: --ngpus: " << a.gpus_per_thread << " does not divide the " << machine->ranks_per_node
              << " ranks of a node (nccl-tests runs processes of -g GPUs each)\n";
    return 2;
  }
  machine->gpus_per_thread = a.gpus_per_thread;
  if (!nccl_call(*machine, coll, 1 << 20, pt.nccl).ok) {
    std::cerr << "hvdsim: runtime.nccl_algo: " << pt.nccl.algo_name()
              << (pt.nccl.proto ? " with runtime.nccl_proto " + std::string(pt.nccl.proto_name()) : std::string())
              << " cannot run " << a.collective << " on this machine (" << machine->nodes
              << (machine->nodes == 1 ? " node" : " nodes") << "; nvls needs NVSwitch with NVLink SHARP, collnet cluster.network.sharp and "
              << "several nodes, pat allgather and reducescatter at one GPU a node, tree and nvls_tree allreduce only, nvls, nvls_tree, collnet, pat and alltoall Simple only; "
              << "alltoall is send/receive, which no NCCL_ALGO chooses)\n";
    return 2;
  }
  *out = *machine;
  return 0;
}

}  // namespace

int run_collective(const Scenario& sc, const CollectiveArgs& a) {
  NcclColl coll;
  std::vector<int64_t> sizes;
  if (const int rc = read_sweep(a, &coll, &sizes)) return rc;
  ScenarioPoint pt = sc.points.front();
  const int np = a.np > 0 ? a.np : pt.np.back();
  NcclMachine machine;
  if (const int rc = raw_machine(pt, a, coll, np, &machine)) return rc;
  // allgather, reducescatter and alltoall split the buffer into one share a rank, as nccl-tests
  // does (a size not divisible is rounded down to one that is): a size below one element a rank
  // has no such share.
  const int64_t esize0 = static_cast<int64_t>(dtype_size(dtype_of(a.datatype)));
  if (coll != NcclColl::kAllreduce && coll != NcclColl::kBroadcast && sizes.front() < esize0 * np) {
    std::cerr << "hvdsim: --minbytes: " << a.min_b << " is below one " << esize0 << "-byte element a rank for "
              << a.collective << " on " << np << " ranks (at least " << esize0 * np << " bytes)\n";
    return 2;
  }
  // As hvdbench's collective mode: event-driven cycle unless the scenario sets one.
  if (!pt.knobs.count("cycle_time_ms") && !pt.knobs.count("HVD_CYCLE_TIME") && !pt.knobs.count("HOROVOD_CYCLE_TIME"))
    pt.config.cycle_time_ms = 0;
  std::vector<Row> rows;
  const int esize = static_cast<int>(dtype_size(dtype_of(a.datatype)));
  for (int64_t s : sizes) {
    Row r;
    r.count = sweep_count(coll, s, np, esize);
    r.bytes = r.count * esize;
    r.raw = nccl_call(machine, coll, static_cast<size_t>(r.bytes), pt.nccl);
    rows.push_back(r);
  }
  if (!a.raw_only) {
    std::vector<CollectivePoint> pts;
    Status s = simulate_collective_sweep(pt, np, coll, sizes, a.warmup, a.iters, &pts, dtype_of(a.datatype), op_of(a.op));
    if (!s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    for (size_t i = 0; i < rows.size() && i < pts.size(); ++i) rows[i].hvd_s = pts[i].seconds;
  }
  print(sc, a, coll, machine, rows, pt.nccl);
  if (!a.report_path.empty()) {
    if (Status s = write_report(a.report_path, sc, a, coll, machine, rows, pt.nccl); !s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace hvd::sim
