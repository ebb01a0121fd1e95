// Spreading a sweep over MPI ranks or --shard invocations, and merging shard reports.
//
// Under MPI each rank takes its share of the jobs by its rank and size from the launcher's
// environment, runs them (one forked child per simulation, isolate.cc) and only then, with
// every child reaped, calls MPI_Init: no child is ever forked from a process that has
// initialised MPI (Open MPI's fork caveats do not arise, and a child forked after MPI_Init
// was measured to simulate slightly differently, which would break the byte-for-byte
// report). The ranks then meet three times: did every rank get through its set-up and into
// MPI as launched? the outcomes to rank 0 and the status back to all; the exit code. A rank
// whose set-up failed goes straight to the first meeting (from finish()). Waits are
// MPI_Ibarrier + sleep, not a spinning collective, so an idle rank leaves the cores alone.
#include "hvd/sim/distribute.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "input/scenario_json.h"

#ifdef HVD_HAVE_MPI
#include <mpi.h>
#endif

namespace hvd::sim {

using nlohmann::json;

namespace {

constexpr const char* kShardKind = "hvdsim shard";

// A positive integer environment variable, or 0.
int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return (*end || x < 0 || x > 1000000) ? 0 : static_cast<int>(x);
}

// How many ranks the launcher started (1 when not launched by mpirun/srun) and which this is.
// HVD_SIM_NO_MPI=1 turns the detection off (e.g. `srun -n 4 sh -c 'hvdsim --shard ...'`).
std::pair<int, int> launch_from_environment(const char** from) {
  if (const char* off = std::getenv("HVD_SIM_NO_MPI"); off && off[0] == '1') return {1, 0};
  const std::pair<const char*, const char*> vars[] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                                      {"PMI_SIZE", "PMI_RANK"},
                                                      {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}};
  for (const auto& [size, rank] : vars) {
    const int n = env_count(size);
    if (n > 0) {
      *from = size;
      return {n, env_count(rank)};
    }
  }
  return {1, 0};
}

// The last non-empty line of what a rank held back, without the "hvdsim: " prefix, cut.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "failed (no message)";
  size_t begin = text.rfind('\n', end);
  std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.rfind("hvdsim: ", 0) == 0) line = line.substr(8);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

int exit_code_of(const Status& s) { return s.code() == StatusCode::kInvalidArgument ? 2 : 1; }
Status status_of_exit(int code, const std::string& msg) {
  return code == 2 ? Status::InvalidArgument(msg) : Status::Internal(msg);
}

// Length-prefixed framing for what goes over MPI (messages may hold any bytes).
void put(std::string* out, const std::string& s) {
  out->append(std::to_string(s.size())).push_back(':');
  out->append(s);
}
bool take(const std::string& in, size_t* pos, std::string* s) {
  const size_t colon = in.find(':', *pos);
  if (colon == std::string::npos) return false;
  const size_t n = std::stoul(in.substr(*pos, colon - *pos));
  if (colon + 1 + n > in.size()) return false;
  *s = in.substr(colon + 1, n);
  *pos = colon + 1 + n;
  return true;
}

#ifdef HVD_HAVE_MPI
// Waits for every rank without spinning a core (MPI's blocking calls busy-poll).
void wait_for_all_ranks() {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  int done = 0;
  while (true) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    ::usleep(2000);
  }
}

void bcast_string(std::string* s, int root) {
  long long n = static_cast<long long>(s->size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD);
  s->resize(static_cast<size_t>(n));
  if (n > 0) MPI_Bcast(s->data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD);
}
#endif

std::string job_name(const SweepJob& j) {
  return j.model + " np=" + std::to_string(j.np) + (j.seed ? " seed +" + std::to_string(j.seed) : "");
}

}  // namespace

int64_t job_cost(const SweepJob& job) {
  const auto np = static_cast<uint64_t>(std::max(1, job.np));
  return static_cast<int64_t>(np * static_cast<uint64_t>(std::bit_width(np)));
}

std::vector<int> assign_jobs(const std::vector<SweepJob>& jobs, int bins) {
  bins = std::max(1, bins);
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return job_cost(jobs[a]) > job_cost(jobs[b]); });
  std::vector<int64_t> load(static_cast<size_t>(bins), 0);
  std::vector<int> bin(jobs.size(), 0);
  for (size_t j : order) {
    const size_t least = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    bin[j] = static_cast<int>(least);
    load[least] += job_cost(jobs[j]);
  }
  return bin;
}

Status parse_shard(const std::string& text, int* index, int* count) {
  const Status bad = Status::InvalidArgument(
      "--shard: '" + cut(text) +
      "' is not i/N with 0 <= i < N <= 100000 (0-based: the shards of 3 are 0/3, 1/3, 2/3)");
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || slash > 6 ||
      text.size() - slash - 1 > 6)
    return bad;
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  if (a.find_first_not_of("0123456789") != std::string::npos ||
      b.find_first_not_of("0123456789") != std::string::npos)
    return bad;
  const int i = std::stoi(a), n = std::stoi(b);
  if (n < 1 || n > 100000 || i >= n) return bad;
  *index = i;
  *count = n;
  return Status::OK();
}

std::string sweep_digest(const std::string& scenario_path, const std::vector<std::string>& overrides,
                         bool with_data, const std::vector<SweepJob>& jobs) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;  // field separator
  };
  std::ifstream f(scenario_path, std::ios::binary);
  mix(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()));
  for (const std::string& o : overrides) mix(o);
  mix(with_data ? "with_data" : "");
  for (const SweepJob& j : jobs)
    mix(std::to_string(j.point) + "/" + j.model + "/" + std::to_string(j.np) + (j.reported ? "" : "/base") +
        (j.seed ? "/seed" + std::to_string(j.seed) : ""));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// ---------------------------------------------------------------------------------------
// Spread

Spread::Spread() {
  const char* from = "";
  const auto [n, r] = launch_from_environment(&from);
  if (n <= 1) return;
  rank_ = r;
  size_ = n;
  launched_ = true;
#ifdef HVD_HAVE_MPI
  // srun starts MPI ranks only with a PMI (srun --mpi=pmix / pmi2): without one each task
  // would be an MPI world of its own and all would write the whole report.
  if (std::string(from) == "SLURM_STEP_NUM_TASKS" && !std::getenv("PMIX_RANK") && !std::getenv("PMI_RANK"))
    launch_error_ = Status::InvalidArgument(
        "srun started " + std::to_string(n) +
        " tasks without a PMI: use srun --mpi=pmix (or pmi2), or mpirun, or --shard i/N with HVD_SIM_NO_MPI=1");
#else
  launch_error_ = Status::InvalidArgument(
      std::string("launched as ") + std::to_string(n) + " ranks (" + from +
      ") but this hvdsim was built without MPI: run one hvdsim per --shard i/N instead (or set HVD_SIM_NO_MPI=1)");
#endif
  if (rank_ != 0) {
    // Rank 0 prints the table and every error's one line; the others stay quiet.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
    cerr_ = std::cerr.rdbuf(held_.rdbuf());
  }
}

Spread::~Spread() {
  if (cerr_) std::cerr.rdbuf(cerr_);
#ifdef HVD_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
}

Status Spread::init_mpi() {
#ifdef HVD_HAVE_MPI
  if (mpi_ || !launched_ || !launch_error_.ok()) return launch_error_;
  const int env_rank = rank_, env_size = size_;
  MPI_Init(nullptr, nullptr);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (rank_ != env_rank || size_ != env_size)
    return Status::InvalidArgument("the launcher said rank " + std::to_string(env_rank) + " of " +
                                   std::to_string(env_size) + " but MPI says " + std::to_string(rank_) + " of " +
                                   std::to_string(size_));
#endif
  return launch_error_;
}

Status Spread::set_shard(const std::string& text) { return parse_shard(text, &shard_index_, &shard_count_); }

Status Spread::agree(const Status& mine) {
#ifdef HVD_HAVE_MPI
  if (!mpi_) return mine;
  wait_for_all_ranks();
  int code = mine.ok() ? 0 : exit_code_of(mine);
  std::vector<int> codes(static_cast<size_t>(size_));
  MPI_Allgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  const auto first = std::find_if(codes.begin(), codes.end(), [](int c) { return c != 0; });
  if (first == codes.end()) return Status::OK();
  const int who = static_cast<int>(first - codes.begin());
  std::string msg = who == rank_ ? mine.message() : "";
  bcast_string(&msg, who);
  agreed_ = true;
  return status_of_exit(*first, who == rank_ ? msg : "rank " + std::to_string(who) + ": " + msg);
#else
  return mine;
#endif
}

Status Spread::gather(const std::vector<size_t>& mine, const std::vector<std::string>& results, Status local,
                      size_t local_failed, std::vector<std::string>* all) {
#ifdef HVD_HAVE_MPI
  std::string out;
  put(&out, local.ok() ? "-" : std::to_string(local_failed));
  put(&out, std::to_string(static_cast<int>(local.code())));
  put(&out, local.message());
  for (size_t j : mine) {
    put(&out, std::to_string(j));
    put(&out, results[j]);
  }
  wait_for_all_ranks();
  int len = static_cast<int>(out.size());
  std::vector<int> lens(static_cast<size_t>(size_)), offs(static_cast<size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string in;
  if (rank_ == 0) {
    long long total = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
      offs[r] = static_cast<int>(total);
      total += lens[r];
    }
    in.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(out.data(), len, MPI_CHAR, in.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  // Rank 0: every outcome in place; the status is that of the first failing job in sweep
  // order, the one a single run reports.
  std::string verdict;  // "" = ok, else "<code>:<message>"
  if (rank_ == 0) {
    size_t first_failed = SIZE_MAX;
    for (size_t r = 0; r < lens.size(); ++r) {
      const std::string part = in.substr(static_cast<size_t>(offs[r]), static_cast<size_t>(lens[r]));
      size_t pos = 0;
      std::string failed, code, msg, idx, text;
      if (!take(part, &pos, &failed) || !take(part, &pos, &code) || !take(part, &pos, &msg)) {
        verdict = std::to_string(static_cast<int>(StatusCode::kInternal)) + ":rank " + std::to_string(r) +
                  " sent a malformed result";
        first_failed = 0;
        break;
      }
      if (failed != "-" && std::stoul(failed) < first_failed) {
        first_failed = std::stoul(failed);
        verdict = code + ":" + msg;
      }
      while (pos < part.size() && take(part, &pos, &idx) && take(part, &pos, &text))
        (*all)[std::stoul(idx)] = std::move(text);
    }
  }
  bcast_string(&verdict, 0);
  if (verdict.empty()) return Status::OK();
  const size_t colon = verdict.find(':');
  return Status(static_cast<StatusCode>(std::stoi(verdict.substr(0, colon))), verdict.substr(colon + 1));
#else
  (void)mine;
  (void)results;
  (void)local_failed;
  (void)all;
  return local;
#endif
}

Status Spread::run(const Scenario& sc, const RunOptions& opts, std::vector<report::RunRecord>* records) {
  if (!launch_error_.ok()) {
    agreed_ = true;  // every rank sees the same launch, so every rank fails alike
    return launch_error_;
  }
  sc_ = &sc;
  jobs_ = sweep_jobs(sc);
  shard_jobs_.clear();
  const std::vector<int> shard_of = sharded() ? assign_jobs(jobs_, shard_count_) : std::vector<int>(jobs_.size(), 0);
  for (size_t j = 0; j < jobs_.size(); ++j)
    if (shard_of[j] == shard_index_) shard_jobs_.push_back(j);
  // This rank's share of the shard's jobs (rank and size from the launcher's environment).
  std::vector<SweepJob> sub;
  for (size_t j : shard_jobs_) sub.push_back(jobs_[j]);
  const std::vector<int> rank_of = assign_jobs(sub, size_);
  std::vector<size_t> mine;
  for (size_t k = 0; k < sub.size(); ++k)
    if (rank_of[k] == rank_) mine.push_back(shard_jobs_[k]);
  RunOptions o = opts;
  if (!is_root()) o.progress = nullptr;
  size_t failed = SIZE_MAX;
  results_.assign(jobs_.size(), {});
  Status s = run_sweep_jobs(sc, o, jobs_, mine, &results_, &failed);
  if (!launched_) {
    if (s.ok() && !sharded()) sweep_records(jobs_, results_, records);
    return s;
  }
  // MPI only now, with every child of this rank reaped: a child forked from a process that
  // has initialised Open MPI simulates slightly differently (its heap is laid out
  // differently), and the report would no longer be the single run's byte for byte.
  // Did every rank get through its set-up (options, scenario) and into MPI as launched?
  // A rank that did not is in finish(), meeting the others here.
  HVD_RETURN_IF_ERROR(agree(init_mpi()));
  HVD_RETURN_IF_ERROR(gather(mine, results_, s, failed, &results_));
  if (is_root() && !sharded()) sweep_records(jobs_, results_, records);
  return Status::OK();
}

Status Spread::write_shard(const std::string& path, const std::string& scenario_path,
                           const std::vector<std::string>& overrides, bool with_data) const {
  if (!is_root() || !sc_) return Status::OK();
  json j = {{"tool", "hvdsim"}, {"version", "0.1.0"}, {"kind", kShardKind}, {"source", scenario_path},
            {"digest", sweep_digest(scenario_path, overrides, with_data, jobs_)},
            {"shard", {{"index", shard_index_}, {"count", shard_count_}}},
            {"jobs", jobs_.size()}};
  json points = json::array();
  for (const ScenarioPoint& pt : sc_->points) points.push_back({{"label", pt.label}, {"what_if", pt.what_if}});
  j["points"] = points;
  for (const report::Reference& r : sc_->reference)  // the published points, for the merged report
    j["reference"].push_back(report::to_json(r));
  json runs = json::array();
  for (size_t k : shard_jobs_) {
    const SweepJob& job = jobs_[k];
    runs.push_back({{"job", k}, {"point", job.point}, {"model", job.model}, {"np", job.np},
                    {"reported", job.reported}, {"outcome", json::parse(results_[k])}});
    if (job.seed) runs.back()["seed"] = job.seed;  // hvdsim --seeds K: which draw
  }
  j["runs"] = runs;
  std::ofstream f(path);
  if (!f) return Status::InvalidArgument("cannot write report '" + path + "'");
  f << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  return f.good() ? Status::OK() : Status::Internal("error writing report '" + path + "'");
}

int Spread::finish(int code) {
  if (launched_ && !agreed_) {
    // Rank 0 has printed its own error already; another rank's comes with its number.
    Status mine = code == 0 ? Status::OK() : status_of_exit(code, rank_ == 0 ? "" : last_line(held_.str()));
    if (!mpi_) {
      // Set-up failed here (or hvdsim had nothing to simulate: --help, --collective, --merge).
      const Status m = init_mpi();
      if (!m.ok() && code == 0) {
        mine = m;
        code = exit_code_of(m);
        if (rank_ == 0) std::cerr << "hvdsim: " << m.message() << std::endl;
      }
    }
    const Status all = agree(mine);
    if (!all.ok()) {
      if (rank_ == 0 && code == 0 && cerr_ == nullptr) std::cerr << "hvdsim: " << all.message() << std::endl;
      code = exit_code_of(all);
    }
  }
  if (cerr_) {
    std::cerr.rdbuf(cerr_);
    cerr_ = nullptr;
  }
#ifdef HVD_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
  mpi_ = false;
  return code;
}

// ---------------------------------------------------------------------------------------
// --merge

namespace {

struct MergeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* expected(json::value_t t) {
  switch (t) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "true or false";
    default: return "a non-negative integer";
  }
}

// j[key], of `type` (number_unsigned: a non-negative integer), or a one-line error.
const json& field(const json& j, const char* key, json::value_t type, const std::string& file,
                  const std::string& path) {
  auto it = j.find(key);
  const std::string at = path.empty() ? key : path + "." + key;
  if (it == j.end()) throw MergeError(file + ": " + at + ": missing (a partial report of hvdsim --shard expected)");
  const bool ok = type == json::value_t::number_unsigned ? it->is_number_unsigned() : it->type() == type;
  if (!ok) throw MergeError(file + ": " + at + ": " + show_json(*it) + " is not " + expected(type));
  return *it;
}

struct Shard {
  std::string file;
  json doc;
  int index = 0, count = 0;
};

Shard read_shard(const std::string& file) {
  // A directory, a FIFO or a huge file is refused before it is read (a directory used to
  // abort with an uncaught stream exception, a FIFO to wait for ever).
  std::string text;
  if (const std::string why = read_input_file(file, &text); !why.empty())
    throw MergeError("--merge: '" + cut(file, 200) + "' " + why);
  Shard s;
  s.file = file;
  s.doc = json::parse(text, nullptr, false);
  if (s.doc.is_discarded() || !s.doc.is_object())
    throw MergeError(file + ": not a JSON object (a partial report of hvdsim --shard expected)");
  auto kind = s.doc.find("kind");
  if (kind == s.doc.end() || *kind != kShardKind)
    throw MergeError(file + ": kind: " + (kind == s.doc.end() ? std::string("missing") : show_json(*kind)) +
                     " is not \"" + kShardKind + "\" (a partial report of hvdsim --shard i/N expected; a full report cannot be merged)");
  const json& sh = field(s.doc, "shard", json::value_t::object, file, "");
  const auto i = field(sh, "index", json::value_t::number_unsigned, file, "shard").get<uint64_t>();
  const auto n = field(sh, "count", json::value_t::number_unsigned, file, "shard").get<uint64_t>();
  if (n < 1 || n > 100000 || i >= n)
    throw MergeError(file + ": shard: " + show_json(sh) + " is not i/N with 0 <= i < N <= 100000");
  s.index = static_cast<int>(i);
  s.count = static_cast<int>(n);
  field(s.doc, "digest", json::value_t::string, file, "");
  field(s.doc, "source", json::value_t::string, file, "");
  field(s.doc, "jobs", json::value_t::number_unsigned, file, "");
  field(s.doc, "points", json::value_t::array, file, "");
  field(s.doc, "runs", json::value_t::array, file, "");
  return s;
}

std::string shard_name(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

}  // namespace

Status merge_shards(const std::vector<std::string>& paths, MergedSweep* out) {
  try {
    std::vector<Shard> shards;
    for (const std::string& p : paths) shards.push_back(read_shard(p));
    if (shards.empty()) throw MergeError("--merge: no partial reports given");
    const Shard& a = shards.front();
    // One sweep: the same digest, shard count and job count.
    for (const Shard& s : shards) {
      if (s.doc["digest"] != a.doc["digest"])
        throw MergeError("--merge: " + s.file + " and " + a.file +
                         " are shards of different sweeps (digest " + s.doc["digest"].get<std::string>() + " vs " +
                         a.doc["digest"].get<std::string>() + ": another scenario file, --set or --with-data)");
      if (s.count != a.count || s.doc["jobs"] != a.doc["jobs"])
        throw MergeError("--merge: " + s.file + " is shard " + shard_name(s) + " but " + a.file + " is shard " +
                         shard_name(a) + ": all shards must come from the same --shard i/N split");
    }
    std::map<int, const Shard*> by_index;
    for (const Shard& s : shards) {
      auto [it, fresh] = by_index.emplace(s.index, &s);
      if (!fresh) throw MergeError("--merge: " + it->second->file + " and " + s.file + " are both shard " + shard_name(s));
    }
    std::vector<std::string> missing;
    for (int i = 0; i < a.count; ++i)
      if (!by_index.count(i)) missing.push_back(std::to_string(i) + "/" + std::to_string(a.count));
    if (!missing.empty()) {
      std::string list;
      for (size_t k = 0; k < missing.size() && k < 8; ++k) list += (k ? ", " : "") + missing[k];
      if (missing.size() > 8) list += ", ... (" + std::to_string(missing.size()) + " in all)";
      throw MergeError("--merge: shard" + std::string(missing.size() > 1 ? "s " : " ") + list + " missing");
    }
    // Every job exactly once; the records as a single run makes them.
    const size_t njobs = a.doc["jobs"].get<size_t>();
    if (njobs > 10000000) throw MergeError(a.file + ": jobs: " + show_json(a.doc["jobs"]) + " is not a job count");
    std::vector<SweepJob> jobs(njobs);
    std::vector<std::string> results(njobs), from(njobs);
    const size_t npoints = a.doc["points"].size();
    for (const auto& [index, s] : by_index) {
      const json& runs = s->doc["runs"];
      for (size_t k = 0; k < runs.size(); ++k) {
        const std::string at = "runs[" + std::to_string(k) + "]";
        if (!runs[k].is_object()) throw MergeError(s->file + ": " + at + ": " + show_json(runs[k]) + " is not an object");
        const size_t j = field(runs[k], "job", json::value_t::number_unsigned, s->file, at).get<size_t>();
        if (j >= njobs) throw MergeError(s->file + ": " + at + ".job: " + std::to_string(j) + " is not below jobs (" + std::to_string(njobs) + ")");
        SweepJob job;
        job.point = field(runs[k], "point", json::value_t::number_unsigned, s->file, at).get<size_t>();
        job.model = field(runs[k], "model", json::value_t::string, s->file, at).get<std::string>();
        const auto np = field(runs[k], "np", json::value_t::number_unsigned, s->file, at).get<uint64_t>();
        if (np < 1 || np > 1000000) throw MergeError(s->file + ": " + at + ".np: " + std::to_string(np) + " is not a rank count");
        job.np = static_cast<int>(np);
        job.reported = field(runs[k], "reported", json::value_t::boolean, s->file, at).get<bool>();
        if (runs[k].contains("seed")) {
          const auto seed = field(runs[k], "seed", json::value_t::number_unsigned, s->file, at).get<uint64_t>();
          if (seed >= static_cast<uint64_t>(kMaxSeeds))
            throw MergeError(s->file + ": " + at + ".seed: " + std::to_string(seed) + " is not below " +
                             std::to_string(kMaxSeeds));
          job.seed = static_cast<int>(seed);
        }
        const json& outcome = field(runs[k], "outcome", json::value_t::object, s->file, at);
        if (job.point >= npoints) throw MergeError(s->file + ": " + at + ".point: " + std::to_string(job.point) + " is not below the number of points (" + std::to_string(npoints) + ")");
        if (!from[j].empty())
          throw MergeError("--merge: job " + std::to_string(j) + " (" + job_name(job) + ") is in both " + from[j] + " and " + s->file);
        from[j] = s->file;
        jobs[j] = job;
        results[j] = outcome.dump();
      }
    }
    for (size_t j = 0; j < njobs; ++j)
      if (from[j].empty())
        throw MergeError("--merge: job " + std::to_string(j) + " of " + std::to_string(njobs) +
                         " is in no partial report (were they written by the same hvdsim?)");
    out->source = by_index.begin()->second->doc["source"].get<std::string>();
    out->scenario = Scenario{};
    out->scenario.source = out->source;
    for (const json& p : a.doc["points"]) {
      ScenarioPoint pt;
      if (p.is_object() && p.value("label", json()).is_string()) pt.label = p["label"];
      if (p.is_object() && p.value("what_if", json()).is_string()) pt.what_if = p["what_if"];
      out->scenario.points.push_back(pt);
    }
    if (a.doc.contains("reference")) {
      try {
        out->scenario.reference = read_reference(a.doc["reference"], /*named=*/true);
      } catch (const ScenarioError& e) {
        throw MergeError(a.file + ": " + e.what());
      }
    }
    try {
      sweep_records(jobs, results, &out->records);
    } catch (const json::exception& e) {
      throw MergeError(std::string("--merge: a run outcome is not one hvdsim wrote: ") + cut(e.what()));
    } catch (const report::RecordError& e) {
      throw MergeError(std::string("--merge: a run outcome is not one hvdsim wrote: ") + cut(e.what()));
    }
    return Status::OK();
  } catch (const MergeError& e) {
    return Status::InvalidArgument(e.what());
  }
}

}  // namespace hvd::sim
