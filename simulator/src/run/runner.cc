#include "hvd/sim/runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "hvd/replay/training_step.h"
#include "hvd/sim/isolate.h"
#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/step_plan.h"
#include "hvd/workloads/transformer_models.h"

namespace hvd::sim {

using nlohmann::json;

namespace {

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '=') c = '_';
  return s;
}

std::map<std::string, std::string> shown_knobs(const ScenarioPoint& pt) {
  std::map<std::string, std::string> k;
  for (const auto& [name, value] : pt.config.describe())
    if (name == "fusion_threshold" || name == "cycle_time_ms" || name == "allreduce_algorithm" ||
        name == "hierarchical_allreduce" || name == "cache_capacity")
      k[name] = value;
  for (const auto& [name, value] : pt.knobs) k[name] = value;
  return k;
}

// A run's outcome as a worker process hands it to the parent (and --shard keeps it): the
// report record as the report writes it, plus what the run cost.
json to_json(const RunOutcome& o) {
  json j = report::to_json(o.record);
  j["wall_s"] = o.wall_s;
  j["simulated_s"] = o.simulated_s;
  j["peak_rss_kib"] = o.peak_rss_kib;
  j["steps_wall_s"] = o.steps_wall_s;
  j["steps_cpu_s"] = o.steps_cpu_s;
  return j;
}

// Throws report::RecordError or nlohmann::json's exceptions on text a worker did not write.
RunOutcome from_json(const json& j) {
  RunOutcome o;
  o.record = report::run_from_json(j, "outcome");
  o.wall_s = j.at("wall_s").get<double>();
  o.simulated_s = j.at("simulated_s").get<double>();
  o.peak_rss_kib = j.at("peak_rss_kib").get<int64_t>();
  o.steps_wall_s = j.value("steps_wall_s", 0.0);
  o.steps_cpu_s = j.value("steps_cpu_s", 0.0);
  return o;
}

// "resnet101 np=8", and " seed=3" (the GPU-speed seed it ran) when the point has several.
std::string job_name(const Scenario& sc, const SweepJob& k) {
  std::string n = k.model + " np=" + std::to_string(k.np);
  const ScenarioPoint& pt = sc.points[k.point];
  if (pt.seeds > 1) n += " seed=" + std::to_string(pt.cluster.gpu_speed_seed + k.seed);
  return n;
}

// Job-wide figures from every rank's replay.
void summarise(const std::vector<replay::ReplayResult>& res, const workloads::StepPlan& plan,
               int accumulation_steps, int np, int shard_ranks, RunOutcome* out) {
  report::RunRecord& r = out->record;
  const size_t steps = res.empty() ? 0 : res[0].steps.size();
  std::vector<double> rates(steps, 0.0);
  for (const auto& rr : res) {
    r.step_time_s += rr.mean.step_s / np;
    r.compute_s += rr.mean.compute_s / np;
    r.exposed_comm_s += rr.mean.exposed_comm_s / np;
    r.negotiation_s += rr.mean.negotiation_s / np;
    r.images_per_sec += rr.samples_per_sec;
    for (size_t k = 0; k < steps && k < rr.steps.size(); ++k)
      rates[k] += static_cast<double>(plan.batch) * accumulation_steps / rr.steps[k].step_s;
  }
  if (steps > 1) {
    double mean = 0, var = 0;
    for (double x : rates) mean += x / static_cast<double>(steps);
    for (double x : rates) var += (x - mean) * (x - mean) / static_cast<double>(steps - 1);
    r.images_per_sec_ci95 = 1.96 * std::sqrt(var / static_cast<double>(steps));
  }
  r.steps = static_cast<int>(steps);
  if (res.empty() || np <= 1) return;
  const replay::ReplayResult& r0 = res[0];
  const int64_t n = static_cast<int64_t>(steps);
  // A sharded step's kinds in the order a step first issues them; DDP's one allreduce as before.
  auto add = [&](const char* op, int64_t calls, int64_t bytes, double time_s, int ranks) {
    report::CollectiveRecord c;
    c.op = op;
    c.calls = calls * n;
    c.bytes = bytes * n;
    c.time_s = time_s * static_cast<double>(steps);
    report::fill_bandwidth(&c, ranks);
    r.collectives.push_back(c);
  };
  if (r0.allgather_calls > 0) add("allgather", r0.allgather_calls, r0.allgather_bytes, r0.allgather_time_s, shard_ranks);
  if (r0.reducescatter_calls > 0)
    add("reducescatter", r0.reducescatter_calls, r0.reducescatter_bytes, r0.reducescatter_time_s, shard_ranks);
  if (r0.allreduce_calls > 0 || (r0.allgather_calls == 0 && r0.reducescatter_calls == 0))
    add("allreduce", r0.allreduce_calls, r0.allreduce_bytes, r0.allreduce_time_s, shard_ranks < np ? np / shard_ranks : np);
}

}  // namespace

std::string autotune_log_name(const std::string& path, const std::string& model, int np,
                              const std::string& label) {
  const std::string run = timeline_name(model, np, label);
  const std::string stem = run.substr(0, run.size() - 5);  // without ".json"
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + "_" + stem;
  return path.substr(0, dot) + "_" + stem + path.substr(dot);
}

WorldOptions world_options(const ScenarioPoint& pt, int np) {
  WorldOptions wo;
  wo.cluster = pt.cluster;
  wo.model = pt.simulation;
  wo.nccl = pt.nccl;
  wo.gpu_cost = pt.device;
  wo.np = np;
  wo.config = pt.config;
  wo.config.timeline.clear();  // one shared writer per run instead
  return wo;
}

std::string timeline_name(const std::string& model, int np, const std::string& label) {
  std::string n = file_safe(model) + "_np" + std::to_string(np);
  if (!label.empty()) n += "_" + file_safe(label);
  return n + ".json";
}

namespace {

// Each GPU computes at its own speed (cluster.gpu_speed_cv): its own step times (none where it
// runs at the plan's). Ranks share the plan (names, sizes) and keep only their times: a plan
// per rank was ~75 KiB of names for ResNet-101 (300 MB at 4,096 ranks).
Status rank_timings(const ScenarioPoint& pt, const workloads::ModelTrace& trace, int np,
                    std::vector<std::optional<replay::StepTiming>>* timings) {
  const workloads::Precision precision = pt.workload.precision;
  auto speed = workloads::compute_speed(trace, pt.cluster.gpu, precision);
  if (!speed) return Status::InvalidArgument(speed.error());
  const double scale = speed->scale;
  timings->assign(static_cast<size_t>(np), std::nullopt);
  for (int r = 0; r < np; ++r) {
    const double f = pt.cluster.gpu_slowdown(r);
    if (f == 1.0) continue;
    auto pr = workloads::make_step_plan(trace, scale * f, pt.workload.batch_size, precision);
    if (!pr) return Status::InvalidArgument(pr.error());
    (*timings)[static_cast<size_t>(r)] = replay::timing_of(*pr);
  }
  return Status::OK();
}

// A dtype name of workload.param_dtype / grad_dtype as the runtime's type (fp8: one byte,
// carried as uint8: the runtime has no 8-bit float; the bytes are what the wire sees).
DataType wire_dtype(const std::string& name, workloads::Precision p) {
  if (name == "fp32") return DataType::kFloat32;
  if (name == "bf16") return DataType::kBFloat16;
  if (name == "fp16") return DataType::kFloat16;
  if (name == "fp8") return DataType::kUInt8;
  if (p == workloads::Precision::kBf16) return DataType::kBFloat16;
  if (p == workloads::Precision::kFp16) return DataType::kFloat16;
  return DataType::kFloat32;
}

replay::ShardingOptions sharding_options(const ScenarioPoint& pt) {
  replay::ShardingOptions so;
  so.mode = pt.workload.sharding;
  so.shard_size = pt.workload.shard_size;
  so.param_dtype = wire_dtype(pt.workload.param_dtype, pt.workload.precision);
  so.grad_dtype = wire_dtype(pt.workload.grad_dtype, pt.workload.precision);
  return so;
}

// How every rank replays the run's steps (onto `tl` when there is a timeline).
Status replay_options(const ScenarioPoint& pt, const workloads::StepPlan& plan, bool with_data, TimelineWriter* tl,
                      replay::ReplayOptions* ro) {
  ro->warmup_steps = pt.workload.warmup_steps;
  ro->steps = pt.workload.steps;
  ro->phantom = !with_data;
  ro->device = pt.device.host_staged ? DeviceKind::kCPU : DeviceKind::kGPU;
  // The update beyond plain SGD's (which the measured throughputs include), from its memory
  // traffic over the model's parameters on this GPU (hvd/workloads/optimizer.h).
  auto update = workloads::optimizer_extra_s(pt.workload.optimizer, plan, pt.cluster.gpu);
  if (!update) return Status::InvalidArgument("workload.optimizer: " + update.error());
  ro->optimizer_s = pt.workload.optimizer_s + *update;
  ro->accumulation_steps = pt.workload.accumulation_steps;
  ro->post_accumulation = pt.workload.allreduce_post_accumulation;
  ro->timeline = tl;
  ro->time_origin = 0;
  ro->max_tuning_steps = pt.config.autotune ? pt.workload.max_tuning_steps : 0;
  ro->sharding = sharding_options(pt);
  return Status::OK();
}

// A moment of the run in wall-clock and CPU seconds since `wall0` (RunOutcome::steps_wall_s).
struct Mark {
  double wall, cpu;
};
Mark mark_since(std::chrono::steady_clock::time_point wall0) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return Mark{std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(),
              static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)};
}

// What a finished run measured: every rank's replay, rank 0's autotuning and step ends.
struct Measured {
  std::vector<replay::ReplayResult> results;
  AutotuneState tuned;
  std::vector<Mark> step_ends;
  Mark start{};
  WorldInfo info;
};

// The run's record and costs from what it measured.
bool is_language_model(const std::string& model) {
  for (const std::string& n : workloads::llm_names())
    if (n == model) return true;
  return false;
}

void record_run(const ScenarioPoint& pt, const std::string& model, int np, const workloads::StepPlan& plan,
                int trace_seq_len, const Measured& m, std::chrono::steady_clock::time_point wall0, RunOutcome* out) {
  report::RunRecord& r = out->record;
  r.model = model;
  r.np = np;
  r.batch_size = pt.workload.batch_size;
  r.gpu = pt.cluster.gpu;
  r.label = pt.label;
  r.knobs = shown_knobs(pt);
  if (m.tuned.enabled) report::add_autotune_knobs(m.tuned, m.results[0].tuning_steps, &r.knobs);  // rank 0's view; all agree
  int shard_ranks = np;
  if (pt.workload.sharding != replay::Sharding::kNone) {
    replay::ShardingOptions so;
    so.mode = pt.workload.sharding;
    so.shard_size = pt.workload.shard_size;
    if (!replay::resolve_shard_size(so, np, &shard_ranks).ok()) shard_ranks = np;
  }
  summarise(m.results, plan, pt.workload.accumulation_steps, np, shard_ranks, out);
  // Tokens: for a workload that names its sequence length or trains a language model.
  if (pt.workload.seq_len > 0 || is_language_model(model)) {
    r.seq_len = trace_seq_len;
    r.tokens_per_sec = r.images_per_sec * trace_seq_len;
    r.sharding = replay::sharding_name(pt.workload.sharding);
  }
  out->simulated_s = m.info.simulated_s;
  const size_t measured = m.results[0].steps.size();
  if (measured > 0 && m.step_ends.size() >= measured) {
    const Mark& from = m.step_ends.size() > measured ? m.step_ends[m.step_ends.size() - measured - 1] : m.start;
    out->steps_wall_s = m.step_ends.back().wall - from.wall;
    out->steps_cpu_s = m.step_ends.back().cpu - from.cpu;
  }
  out->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  out->peak_rss_kib = ru.ru_maxrss;
}

}  // namespace

Status simulate_run(const ScenarioPoint& pt, const std::string& model, int np,
                    const RunOptions& opts, RunOutcome* out) {
  const auto wall0 = std::chrono::steady_clock::now();
  auto trace = workloads::find_model(model, pt.workload.seq_len);
  if (!trace) return Status::InvalidArgument(trace.error());
  auto plan = workloads::make_step_plan(*trace, pt.cluster.gpu, pt.workload.batch_size, pt.workload.precision);
  if (!plan) return Status::InvalidArgument(plan.error());
  std::vector<std::optional<replay::StepTiming>> timings;
  HVD_RETURN_IF_ERROR(rank_timings(pt, *trace, np, &timings));
  WorldOptions wo = world_options(pt, np);
  wo.with_data = opts.with_data || pt.with_data;
  // A sharded job on NCCL gathers and reduce-scatters on NCCL too, as Horovod does under
  // HOROVOD_GPU_OPERATIONS=NCCL (the runtime's "auto" picks NCCL for the allreduce only).
  if (pt.workload.sharding != replay::Sharding::kNone && pt.nccl.enabled) {
    if (wo.config.allgather_algorithm == "auto") wo.config.allgather_algorithm = "native";
    if (wo.config.reducescatter_algorithm == "auto") wo.config.reducescatter_algorithm = "native";
  }
  // The files of a run: its label, and with several seeds the seed it ran ("seed=1").
  const std::string files = pt.seeds <= 1 ? pt.label
                                          : pt.label + (pt.label.empty() ? "" : ",") + "seed=" +
                                                std::to_string(pt.cluster.gpu_speed_seed);
  if (!wo.config.autotune_log.empty()) wo.config.autotune_log = autotune_log_name(wo.config.autotune_log, model, np, files);
  std::unique_ptr<TimelineWriter> tl;
  if (!opts.timeline_dir.empty()) {
    HVD_ASSIGN_OR_RETURN(tl, TimelineWriter::open(opts.timeline_dir + "/" + timeline_name(model, np, files)));
    wo.timeline = tl.get();
  }
  replay::ReplayOptions ro;
  HVD_RETURN_IF_ERROR(replay_options(pt, *plan, wo.with_data, tl.get(), &ro));
  Measured m;
  m.start = mark_since(wall0);
  m.results.resize(static_cast<size_t>(np));
  std::vector<Status> statuses(static_cast<size_t>(np));
  HVD_RETURN_IF_ERROR(check_nccl_run(pt, np));
  if (ro.sharding.mode != replay::Sharding::kNone) {
    int shard = 0;
    HVD_RETURN_IF_ERROR(replay::resolve_shard_size(ro.sharding, np, &shard));
  }
  HVD_RETURN_IF_ERROR(simulate(
      wo,
      [&](Runtime& rt, RankSeams& seams) {
        // Phantom gradients get addresses from the rank's simulated device, so the cache
        // model follows each tensor (a chunk the ring just reduced is sent from cache).
        replay::ReplayOptions mine = ro;
        if (ro.phantom) mine.memory = ro.device == DeviceKind::kCPU ? seams.cpu : seams.gpu;
        if (const auto& own = timings[static_cast<size_t>(seams.rank)]) mine.timing = &*own;
        if (seams.rank == 0) mine.on_step = [&](int, const replay::StepSample&) { m.step_ends.push_back(mark_since(wall0)); };
        statuses[static_cast<size_t>(seams.rank)] =
            replay::replay_training(rt, *seams.platform, *plan, mine, &m.results[static_cast<size_t>(seams.rank)]);
        if (seams.rank == 0) m.tuned = rt.autotune_state();
      },
      &m.info));
  for (const Status& st : statuses)
    if (!st.ok()) return st;
  if (tl) tl->flush();
  record_run(pt, trace->name, np, *plan, trace->seq_len, m, wall0, out);
  return Status::OK();
}

std::vector<SweepJob> sweep_jobs(const Scenario& sc) {
  std::vector<SweepJob> keys;
  for (size_t p = 0; p < sc.points.size(); ++p) {
    const ScenarioPoint& pt = sc.points[p];
    for (const std::string& m : pt.workload.models) {
      bool has_single = false;
      for (int n : pt.np) has_single = has_single || n == 1;
      for (int s = 0; !has_single && s < pt.seeds; ++s) keys.push_back({p, m, 1, false, s});
      for (int n : pt.np)
        for (int s = 0; s < pt.seeds; ++s) keys.push_back({p, m, n, true, s});
    }
  }
  return keys;
}

Status run_sweep_jobs(const Scenario& sc, const RunOptions& opts, const std::vector<SweepJob>& keys,
                      const std::vector<size_t>& which, std::vector<std::string>* results,
                      size_t* failed) {
  std::vector<IsolatedJob> jobs;
  for (size_t w : which) {
    const SweepJob k = keys[w];
    jobs.push_back([&sc, &opts, k](std::string* result) {
      RunOutcome o;
      Status s;
      if (k.seed == 0) {
        s = simulate_run(sc.points[k.point], k.model, k.np, opts, &o);
      } else {  // another draw of the random parameters
        ScenarioPoint pt = sc.points[k.point];
        pt.cluster.gpu_speed_seed += k.seed;
        s = simulate_run(pt, k.model, k.np, opts, &o);
      }
      if (s.ok()) *result = to_json(o).dump();
      return s;
    });
  }
  const int parallel = opts.parallel > 0 ? opts.parallel : (sc.points.empty() ? 1 : sc.points[0].parallel);
  std::vector<std::string> mine;
  size_t finished = 0;
  std::vector<Status> st = run_isolated_many(jobs, parallel, &mine, [&](size_t i) {
    ++finished;
    if (!opts.progress) return;
    const SweepJob& k = keys[which[i]];
    std::ostringstream os;
    os << "[" << finished << "/" << jobs.size() << "] " << job_name(sc, k);
    if (!sc.points[k.point].label.empty()) os << " " << sc.points[k.point].label;
    if (!mine[i].empty()) {
      json j = json::parse(mine[i], nullptr, false);
      if (!j.is_discarded())
        os << ": " << static_cast<int64_t>(j["images_per_sec"].get<double>()) << " images/s, simulated "
           << j["simulated_s"].get<double>() << " s in " << j["wall_s"].get<double>() << " s wall";
    } else {
      os << ": failed";
    }
    opts.progress(os.str());
  });
  results->resize(keys.size());
  for (size_t i = 0; i < which.size(); ++i) (*results)[which[i]] = std::move(mine[i]);
  for (size_t i = 0; i < st.size(); ++i)
    if (!st[i].ok()) {
      if (failed) *failed = which[i];
      return Status(st[i].code(), job_name(sc, keys[which[i]]) + ": " + st[i].message());
    }
  return Status::OK();
}

namespace {

// The record of one (point, model, np) from its K > 1 seeds' records: the mean of every
// figure, the [min, max] of images/s and efficiency; knobs and call counts from seed 0.
report::RunRecord fold_seeds(const std::vector<const report::RunRecord*>& seeds) {
  report::RunRecord r = *seeds.front();
  const double k = static_cast<double>(seeds.size());
  r.seeds = static_cast<int>(seeds.size());
  r.images_per_sec_lo = r.images_per_sec_hi = r.images_per_sec;
  r.scaling_efficiency_lo = r.scaling_efficiency_hi = r.scaling_efficiency;
  double sum[8] = {};
  for (const report::RunRecord* s : seeds) {
    const double v[8] = {s->images_per_sec, s->images_per_sec_ci95, s->images_per_sec_single, s->scaling_efficiency,
                         s->step_time_s, s->compute_s, s->exposed_comm_s, s->negotiation_s};
    for (int i = 0; i < 8; ++i) sum[i] += v[i];
    r.images_per_sec_lo = std::min(r.images_per_sec_lo, s->images_per_sec);
    r.images_per_sec_hi = std::max(r.images_per_sec_hi, s->images_per_sec);
    r.scaling_efficiency_lo = std::min(r.scaling_efficiency_lo, s->scaling_efficiency);
    r.scaling_efficiency_hi = std::max(r.scaling_efficiency_hi, s->scaling_efficiency);
  }
  double* out[8] = {&r.images_per_sec, &r.images_per_sec_ci95, &r.images_per_sec_single, &r.scaling_efficiency,
                    &r.step_time_s, &r.compute_s, &r.exposed_comm_s, &r.negotiation_s};
  for (int i = 0; i < 8; ++i) *out[i] = sum[i] / k;
  r.tokens_per_sec = r.images_per_sec * r.seq_len;
  for (size_t c = 0; c < r.collectives.size(); ++c) {
    double t = 0;
    for (const report::RunRecord* s : seeds)
      t += c < s->collectives.size() ? s->collectives[c].time_s : r.collectives[c].time_s;
    r.collectives[c].time_s = t / k;
    report::fill_bandwidth(&r.collectives[c], r.np);
  }
  return r;
}

}  // namespace

void sweep_records(const std::vector<SweepJob>& keys, const std::vector<std::string>& results,
                   std::vector<report::RunRecord>* records, std::vector<RunOutcome>* outcomes) {
  std::vector<RunOutcome> all;
  for (const std::string& r : results) all.push_back(from_json(json::parse(r)));
  // Scaling efficiency against the np=1 run of the same point, model and seed.
  std::map<std::tuple<size_t, std::string, int>, double> single;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i].np == 1) single[{keys[i].point, keys[i].model, keys[i].seed}] = all[i].record.images_per_sec;
  // The reported jobs of each (point, model, np), its seeds in order; first-seen order.
  std::vector<std::vector<size_t>> groups;
  std::map<std::tuple<size_t, std::string, int>, size_t> group_of;
  for (size_t i = 0; i < keys.size(); ++i) {
    RunOutcome& o = all[i];
    o.record.images_per_sec_single = single[{keys[i].point, keys[i].model, keys[i].seed}];
    if (o.record.images_per_sec_single > 0)
      o.record.scaling_efficiency = o.record.images_per_sec / (o.record.np * o.record.images_per_sec_single);
    if (!keys[i].reported) continue;
    auto [it, fresh] = group_of.emplace(std::make_tuple(keys[i].point, keys[i].model, keys[i].np), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  records->clear();
  for (const std::vector<size_t>& g : groups) {
    RunOutcome o = all[g.front()];  // one seed: the record as it is
    if (g.size() > 1) {
      std::vector<const report::RunRecord*> seeds;
      for (size_t i : g) seeds.push_back(&all[i].record);
      o.record = fold_seeds(seeds);
      for (size_t i : g) {  // the run costs of all K
        if (i == g.front()) continue;
        o.wall_s += all[i].wall_s;
        o.simulated_s += all[i].simulated_s;
        o.peak_rss_kib = std::max(o.peak_rss_kib, all[i].peak_rss_kib);
      }
    }
    records->push_back(o.record);
    if (outcomes) outcomes->push_back(o);
  }
}

Status run_scenario(const Scenario& sc, const RunOptions& opts, std::vector<report::RunRecord>* records,
                    std::vector<RunOutcome>* outcomes) {
  const std::vector<SweepJob> keys = sweep_jobs(sc);
  std::vector<size_t> all(keys.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::string> results;
  HVD_RETURN_IF_ERROR(run_sweep_jobs(sc, opts, keys, all, &results));
  sweep_records(keys, results, records, outcomes);
  return Status::OK();
}

std::string format_best_per_np(const std::vector<report::RunRecord>& records) {
  // First record per (model, np) in sweep order wins ties, so the output is stable.
  std::vector<const report::RunRecord*> best;
  for (const report::RunRecord& r : records) {
    auto it = std::find_if(best.begin(), best.end(),
                           [&](const report::RunRecord* b) { return b->model == r.model && b->np == r.np; });
    if (it == best.end()) best.push_back(&r);
    else if (r.images_per_sec > (*it)->images_per_sec) *it = &r;
  }
  auto knob = [](const report::RunRecord& r, const std::string& k) {
    auto it = r.knobs.find(k);
    return it == r.knobs.end() ? std::string("-") : it->second;
  };
  std::ostringstream os;
  os << "best setting per np (highest images/s over the sweep):\n";
  char line[320];
  std::snprintf(line, sizeof line, "%-12s %6s %12s %8s  %s\n", "model", "np", "images/s", "eff", "setting");
  os << line;
  for (const report::RunRecord* r : best) {
    std::ostringstream set;
    if (!r->label.empty()) set << r->label << "; ";
    if (r->knobs.count("autotune.fusion_threshold")) {
      set << "autotuned: fusion_threshold=" << knob(*r, "autotune.fusion_threshold")
          << " cycle_time_ms=" << knob(*r, "autotune.cycle_time_ms") << " cache=" << knob(*r, "autotune.cache")
          << " hierarchical_allreduce=" << knob(*r, "autotune.hierarchical_allreduce")
          << " hierarchical_allgather=" << knob(*r, "autotune.hierarchical_allgather");
    } else {
      set << "fusion_threshold=" << knob(*r, "fusion_threshold") << " cycle_time_ms=" << knob(*r, "cycle_time_ms")
          << " cache_capacity=" << knob(*r, "cache_capacity")
          << " hierarchical_allreduce=" << knob(*r, "hierarchical_allreduce");
    }
    std::snprintf(line, sizeof line, "%-12s %6d %12.1f %7.1f%%  %s\n", r->model.c_str(), r->np,
                  r->images_per_sec, 100.0 * r->scaling_efficiency, set.str().c_str());
    os << line;
  }
  return os.str();
}

}  // namespace hvd::sim
