#include "model_mode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "gpu_world.h"
#include "hvd/workloads/gpu_catalog.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/optimizer.h"
#include "hvd/workloads/strict_json.h"
#include "bench_world.h"
#include "rank_runtime.h"

namespace hvd::bench {

namespace wl = hvd::workloads;

namespace {

std::string gib(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return b;
}

// With --device cpu every rank holds all its gradients in host memory at once: a tensor, or
// all of them, larger than this host's memory is bad input, named before anything allocates
// (rather than "out of memory" from a rank). Device memory is the GPU backend's to check.
std::string check_host_memory(const wl::ModelTrace& trace, const Options& o) {
  if (o.device != "cpu") return "";
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return "";
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  for (std::size_t i = 0; i < trace.tensors.size(); ++i) {
    const wl::TensorSpec& t = trace.tensors[i];
    const double bytes = static_cast<double>(t.elements) * wl::dtype_size(t.dtype);
    if (bytes > memory)
      return wl::cut_text(o.model) + ": tensors[" + std::to_string(i) + "] \"" +
             wl::cut_text(t.name) + "\": " + std::to_string(t.elements) + " elements (" +
             gib(bytes) + " of " + t.dtype + ") do not fit in this host's memory (" +
             gib(memory) + "); expected a tensor that --device cpu can allocate";
  }
  const double total = static_cast<double>(trace.total_bytes());
  if (total > memory)
    return wl::cut_text(o.model) + ": tensors: " + std::to_string(trace.tensors.size()) +
           " gradients of " + gib(total) + " together do not fit in this host's memory (" +
           gib(memory) + "); expected gradients that --device cpu can allocate";
  return "";
}

}  // namespace

wl::Result<wl::StepPlan> plan_for(const wl::ModelTrace& trace, const Options& o) {
  if (std::string e = check_host_memory(trace, o); !e.empty()) return wl::Error{e};
  double scale = o.compute_scale;
  wl::Result<wl::Precision> precision = wl::parse_precision(o.precision);
  if (!precision) return wl::Error{"--precision: " + precision.error()};
  if (*precision != wl::Precision::kFp32 && o.gpu.empty())
    return wl::Error{"--precision " + o.precision + " needs --gpu (the GPU whose measured " + o.precision +
                     " throughput times the step)"};
  if (!o.gpu.empty()) {
    wl::Result<wl::ComputeSpeed> g = wl::compute_speed(trace, o.gpu, *precision);
    if (!g) return wl::Error{"--gpu: " + g.error()};
    scale *= g->scale;
  }
  wl::Result<wl::StepPlan> plan =
      wl::make_step_plan(trace, scale, o.batch_size > 0 ? o.batch_size : trace.reference_batch, *precision);
  // A step that would compute for more than a day is bad input, not a run to wait for.
  constexpr double kMaxStepSeconds = 86400;
  if (plan && !(plan->step_s * o.accumulation_steps <= kMaxStepSeconds)) {
    char why[200];
    std::snprintf(why, sizeof why, "a step of %.3g s (batch %d, compute scale %.3g, %d micro-batches) is longer than a day; "
                  "lower --batch-size, --compute-scale or --accumulation-steps", plan->step_s * o.accumulation_steps,
                  plan->batch, scale, o.accumulation_steps);
    return wl::Error{why};
  }
  return plan;
}

namespace {

// Knobs worth showing in the report (docs/formats.md: "knobs").
std::map<std::string, std::string> report_knobs(const Config& c) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : c.describe()) {
    if (k == "fusion_threshold" || k == "cycle_time_ms" || k == "cache_capacity" ||
        k == "allreduce_algorithm" || k == "hierarchical_allreduce" ||
        k == "hierarchical_allgather" || k == "autotune")
      out[k] = v;
  }
  return out;
}

std::string mib(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f MiB", bytes / 1048576.0);
  return b;
}

void print_banner(const Options& o, const wl::ModelTrace& t, const wl::StepPlan& p,
                  const Config& c, int np, bool mpi) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%.1fM parameters, %zu tensors, %s of gradients",
                static_cast<double>(t.params) / 1e6, t.tensors.size(),
                mib(static_cast<double>(t.total_bytes())).c_str());
  os << "Model:       " << t.name << " (" << line << ")\n";
  os << "Mode:        " << (o.ensemble ? "ensemble (no gradient exchange; one final broadcast)"
                                       : "training (gradients allreduced as backprop makes them)")
     << "\n";
  os << "Batch size:  " << p.batch << " per rank, " << p.batch * np << " global\n";
  std::snprintf(line, sizeof line, "%s x %.3g (batch %d/%d) => %.1f ms/step (fwd %.1f, bwd %.1f)",
                (o.gpu.empty() ? t.reference_gpu : o.gpu).c_str(), p.time_scale, p.batch,
                t.reference_batch, p.step_s * 1e3, p.fwd_s * 1e3, p.bwd_s * 1e3);
  os << "Compute:     " << line << " (emulated)\n";
  os << "Ranks:       " << np << (mpi ? " (Open MPI)" : " (in-process)") << "\n";
  if (o.device == "gpu")
    os << "Device:      GPU, one per rank; gradients are device tensors, NCCL backend ("
       << gpu_versions() << ")\n";
  std::snprintf(line, sizeof line, "fusion %s, cycle %g ms, cache %lld, allreduce %s%s",
                mib(static_cast<double>(c.fusion_threshold)).c_str(), c.cycle_time_ms,
                static_cast<long long>(c.cache_capacity), c.allreduce_algorithm.c_str(),
                c.hierarchical_allreduce ? " (hierarchical)" : "");
  os << "Knobs:       " << line << "\n";
  os << "Steps:       " << o.warmup << " warm-up + " << o.steps << " measured\n\n";
  std::cout << os.str() << std::flush;
}

void print_summary(const report::RunRecord& r) {
  std::printf("%s np=%d%s: %.1f +- %.1f images/s (95%% interval)", r.model.c_str(), r.np,
              r.label.empty() ? "" : (" [" + r.label + "]").c_str(), r.images_per_sec,
              r.images_per_sec_ci95);
  if (r.images_per_sec_single > 0)
    std::printf(", scaling efficiency %.1f%% (1 rank: %.1f images/s)",
                100 * r.scaling_efficiency, r.images_per_sec_single);
  std::printf("\n");
  for (const auto& c : r.collectives) {
    if (r.np == 1 || c.time_s <= 0) {
      std::printf("  %s: %lld calls, %s (%s)\n", c.op.c_str(), static_cast<long long>(c.calls),
                  mib(static_cast<double>(c.bytes)).c_str(),
                  r.np == 1 ? "one rank: nothing to exchange" : "after training, not timed");
      continue;
    }
    std::printf("  %s: %lld calls, %s, executing %.3f s: algbw %.3f GB/s, busbw %.3f GB/s\n",
                c.op.c_str(), static_cast<long long>(c.calls),
                mib(static_cast<double>(c.bytes)).c_str(), c.time_s, c.algbw_gbps, c.busbw_gbps);
  }
}

struct Progress {
  const char* what;
  const Options& o;
  bool enabled;
  void operator()(int step, const replay::StepSample& s) const {
    if (!enabled) return;
    const bool warm = step < o.warmup;
    std::fprintf(stderr, "hvdbench: %s step %d/%d%s: %.1f ms (compute %.1f, exposed %.1f)\n",
                 what, warm ? step + 1 : step - o.warmup + 1, warm ? o.warmup : o.steps,
                 warm ? " (warm-up)" : "", s.step_s * 1e3, s.compute_s * 1e3,
                 s.exposed_comm_s * 1e3);
  }
};

// Gathers every rank's measured samples (and allreduce execution time) on every rank.
Status gather_samples(Runtime& rt, const replay::ReplayResult& mine, WorldSamples* out) {
  const size_t n = mine.steps.size();
  std::vector<double> row;
  for (const auto& s : mine.steps)
    row.insert(row.end(), {s.step_s, s.compute_s, s.exposed_comm_s, s.negotiation_s});
  row.push_back(mine.allreduce_time_s);
  Tensor t{row.data(), DataType::kFloat64, {1, static_cast<int64_t>(row.size())}};
  Handle h = rt.allgather_async("hvdbench.samples", t);
  HVD_RETURN_IF_ERROR(h->wait());
  const auto* all = static_cast<const double*>(h->output());
  const size_t ranks = h->output_bytes() / (row.size() * sizeof(double));
  out->samples.assign(ranks, {});
  out->allreduce_time_s.assign(ranks, 0);
  for (size_t r = 0; r < ranks; ++r) {
    const double* x = all + r * row.size();
    for (size_t i = 0; i < n; ++i)
      out->samples[r].push_back({x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]});
    out->allreduce_time_s[r] = x[4 * n];
  }
  return Status::OK();
}

MemoryKind memory_kind(const Options& o) {
  return o.device == "gpu" ? MemoryKind::kGpu : MemoryKind::kHost;
}

// Runs the replay on a started runtime; fills the world's samples.
Status replay_on(RankRuntime& rr, const wl::StepPlan& plan, const Options& o, const char* what,
                 bool progress, replay::ReplayResult* mine, WorldSamples* world) {
  replay::ReplayOptions ro;
  ro.warmup_steps = o.warmup;
  ro.steps = o.steps;
  ro.ensemble = o.ensemble;
  ro.optimizer_s = o.optimizer_ms * 1e-3 + o.optimizer_extra_s;
  ro.accumulation_steps = o.accumulation_steps;
  ro.post_accumulation = o.post_accumulation;
  ro.timeline = rr.timeline();
  ro.time_origin = rr.origin();
  // Each step's events reach the file when the step ends: a run that fails later (a killed
  // peer, the stall shutdown) keeps its timeline up to there.
  ro.on_step = [p = Progress{what, o, progress}, tl = rr.timeline()](int step, const replay::StepSample& s) {
    p(step, s);
    if (tl) tl->flush();
  };
  // HOROVOD_AUTOTUNE: extra warm-up steps until the tuned setting is final (bounded).
  ro.max_tuning_steps = rr.runtime().autotune_state().enabled ? 1000 : 0;
  ro.device = rr.device_kind();
  if (ro.device == DeviceKind::kGPU) ro.memory = &rr.device();
  HVD_RETURN_IF_ERROR(replay::replay_training(rr.runtime(), rr.platform(), plan, ro, mine));
  return gather_samples(rr.runtime(), *mine, world);
}

// The 1-rank baseline in this process (in-process backend, no timeline).
Status run_baseline(const wl::ModelTrace& trace, const wl::StepPlan& plan, const Options& o,
                    Config cfg, bool progress, report::RunRecord* rec) {
  cfg.timeline.clear();
  std::unique_ptr<RankRuntime> rr;
  HVD_RETURN_IF_ERROR(RankRuntime::start(WorldKind::kLocalSingle, cfg, 0, &rr, memory_kind(o)));
  replay::ReplayResult mine;
  WorldSamples world;
  const Status s = replay_on(*rr, plan, o, "1-rank baseline", progress, &mine, &world);
  Status d = rr->shutdown();
  if (!s.ok()) return s;
  if (!d.ok()) return d;
  *rec = summarise_run(o, trace, plan, world, mine, 0);
  rec->knobs = report_knobs(cfg);
  return Status::OK();
}

// Rank 0 measures the 1-rank baseline (its record goes to *records) and tells every rank
// its rate; -1 when it failed.
double world_single_rate(const BenchWorld& w, const wl::ModelTrace& trace, const wl::StepPlan& plan,
                         const Options& o, const Config& cfg, bool progress,
                         std::vector<report::RunRecord>* records) {
  double single = -1;
  if (w.rank == 0) {
    report::RunRecord base;
    Status s = run_baseline(trace, plan, o, cfg, progress, &base);
    if (!s.ok()) std::cerr << "hvdbench: 1-rank baseline: " << s.message() << "\n";
    if (s.ok()) {
      single = base.images_per_sec;
      records->push_back(base);
    }
  }
  return w.from_rank0(single, /*idle=*/true);
}

// One timeline origin for every rank: rank 0's clock (one host, one clock).
double world_time_origin(const BenchWorld& w) {
  w.barrier();
  return w.from_rank0(std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace

report::RunRecord summarise_run(const Options& o, const wl::ModelTrace& trace,
                                const wl::StepPlan& plan, const WorldSamples& world,
                                const replay::ReplayResult& mine, double single_rate) {
  report::RunRecord r;
  const int np = static_cast<int>(world.samples.size());
  const size_t n = world.samples.empty() ? 0 : world.samples[0].size();
  r.model = trace.name;
  r.np = np;
  r.batch_size = plan.batch;
  r.gpu = o.gpu.empty() ? trace.reference_gpu : o.gpu;
  r.label = o.label.empty() && o.ensemble ? "ensemble" : o.label;
  r.steps = static_cast<int>(n);
  std::vector<double> rates;
  for (size_t i = 0; i < n; ++i) {
    size_t slowest = 0;
    for (size_t k = 1; k < world.samples.size(); ++k)
      if (world.samples[k][i].step_s > world.samples[slowest][i].step_s) slowest = k;
    const replay::StepSample& s = world.samples[slowest][i];
    r.step_time_s += s.step_s / n;
    r.compute_s += s.compute_s / n;
    r.exposed_comm_s += s.exposed_comm_s / n;
    r.negotiation_s += s.negotiation_s / n;
    rates.push_back(np * plan.batch / s.step_s);
  }
  r.images_per_sec = r.step_time_s > 0 ? np * plan.batch / r.step_time_s : 0;
  if (rates.size() > 1) {
    double mean = 0, var = 0;
    for (double x : rates) mean += x / rates.size();
    for (double x : rates) var += (x - mean) * (x - mean) / (rates.size() - 1);
    r.images_per_sec_ci95 = replay::t_quantile_975(rates.size() - 1) * std::sqrt(var / rates.size());
  }
  r.images_per_sec_single = single_rate > 0 ? single_rate : (np == 1 ? r.images_per_sec : 0);
  if (r.images_per_sec_single > 0)
    r.scaling_efficiency = r.images_per_sec / (np * r.images_per_sec_single);
  report::CollectiveRecord c;
  if (!o.ensemble) {
    c.op = "allreduce";
    c.calls = mine.allreduce_calls * static_cast<int64_t>(n);
    c.bytes = mine.allreduce_bytes * static_cast<int64_t>(n);
    for (double t : world.allreduce_time_s) c.time_s = std::max(c.time_s, t * n);
  } else if (!plan.tensors.empty()) {
    c.op = "broadcast";  // the one exchange of an ensemble, after training (not timed)
    c.calls = 1;
    c.bytes = plan.tensors[0].bytes;
  }
  if (!c.op.empty()) {
    if (np > 1) report::fill_bandwidth(&c, np);  // one rank moves nothing: no bandwidth
    r.collectives.push_back(c);
  }
  return r;
}

int run_model_mode(const Options& given, bool mpi) {
  Options o = given;
  wl::Result<wl::ModelTrace> trace = wl::find_model(o.model, o.seq_len);
  if (!trace) {
    std::cerr << "hvdbench: " << trace.error() << "\n";
    return kExitBadInput;
  }
  wl::Result<wl::StepPlan> plan = plan_for(*trace, o);
  if (!plan) {
    std::cerr << "hvdbench: " << plan.error() << "\n";
    return kExitBadInput;
  }
  // The update beyond plain SGD's, on the GPU the step is timed for (hvd/workloads/optimizer.h).
  wl::Result<double> update = wl::optimizer_extra_s(*wl::parse_optimizer(o.optimizer), *plan,
                                                    o.gpu.empty() ? trace->reference_gpu : o.gpu);
  if (!update) {
    std::cerr << "hvdbench: --optimizer: " << update.error() << "\n";
    return kExitBadInput;
  }
  o.optimizer_extra_s = *update;
  Config cfg;
  if (!knobs_from_env(&cfg)) return kExitBadInput;
  BenchWorld w;
  Status s = w.start(mpi);
  if (!s.ok()) return w.fail(std::string(BenchWorld::built_with_mpi() ? "MPI start-up: " : "MPI world: ") + s.message());
  const int rank = w.rank, size = w.size;
  double origin = 0;
  if (mpi && o.device == "gpu") {
    // Before rank 0's 1-rank baseline: every rank must have a GPU. The first rank without
    // one says why (one line); all ranks exit 1 without aborting the job.
    const GpuVerdict v = check_gpu_here();
    const int first = w.first_failing(v.exit_code == kExitOk);
    if (first >= 0) {
      if (rank == first) std::cerr << "hvdbench: " << v.reason << "\n";
      w.finalize();
      return v.exit_code != kExitOk ? v.exit_code : kExitRuntimeFailure;
    }
  }
  const bool progress =
      rank == 0 && !o.quiet && plan->step_s * (o.warmup + o.steps) > 3.0;
  if (rank == 0) print_banner(o, *trace, *plan, cfg, size, mpi);

  std::vector<report::RunRecord> records;
  double single = o.single_rate;
  if (size > 1 && single == 0 && !o.no_baseline) {
    single = world_single_rate(w, *trace, *plan, o, cfg, progress, &records);
    if (single < 0) return w.fail("1-rank baseline: failed on rank 0");
  }
  if (mpi) origin = world_time_origin(w);
  std::unique_ptr<RankRuntime> rr;
  bool agreed = false;
  s = RankRuntime::start(mpi ? WorldKind::kMpi : WorldKind::kLocalSingle, cfg, origin, &rr,
                         memory_kind(o), &agreed);
  if (!s.ok() && agreed) {
    // Every rank failed alike (no GPU, NCCL set-up): one line from rank 0, a clean exit.
    if (rank == 0) std::cerr << "hvdbench: --device gpu: " << s.message() << "\n";
    w.finalize();
    return kExitRuntimeFailure;
  }
  if (!s.ok()) return w.fail("runtime start: " + s.message());
  replay::ReplayResult mine;
  WorldSamples world;
  s = replay_on(*rr, *plan, o, size > 1 ? "training" : "1 rank", progress, &mine, &world);
  if (!s.ok()) {
    if (rr->timeline()) rr->timeline()->flush();  // what the failed step recorded, too
    return w.fail("replay: " + s.message());
  }
  const AutotuneState tuned = rr->runtime().autotune_state();
  s = rr->shutdown();
  if (!s.ok()) return w.fail("runtime shutdown: " + s.message());
  rr.reset();
  int code = kExitOk;
  if (rank == 0) {
    records.push_back(summarise_run(o, *trace, *plan, world, mine, single));
    records.back().knobs = report_knobs(cfg);
    if (tuned.enabled) report::add_autotune_knobs(tuned, mine.tuning_steps, &records.back().knobs);
    std::cout << report::format_table(records) << "\n";
    for (const auto& r : records) print_summary(r);
    std::cout << std::flush;
    if (!o.report.empty()) {
      s = report::write_report(o.report, "hvdbench", o.model, records);
      if (!s.ok()) {
        std::cerr << "hvdbench: " << s.message() << "\n";
        code = kExitRuntimeFailure;
      }
    }
  }
  w.finalize();
  return code;
}

}  // namespace hvd::bench
