#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <sstream>

#include "core/units.h"
#include "hvd/config.h"
#include "hvd/types.h"
#include "cli_flags.h"

namespace hvd::bench {

std::string fmt_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

namespace {

constexpr const char* kModelGroup = "Model mode";
constexpr const char* kCollectiveGroup = "Collective mode (nccl-tests style)";

const char* kDescription =
    "hvdbench: Horovod-style benchmarks of the hvd runtime.\n"
    "\n"
    "Model mode replays training steps of a model (tf_cnn_benchmarks-style): forward, backward\n"
    "layer by layer with each gradient allreduced asynchronously as soon as it is ready,\n"
    "optimizer. Compute is emulated (sleep of the reference GPU time, scaled by --gpu and\n"
    "--compute-scale), so communication overlaps compute as in real training. It prints\n"
    "images/s (mean and 95 % interval), scaling efficiency against a 1-rank baseline run by the\n"
    "same binary, and the step time split into compute, exposed communication and negotiation.\n"
    "\n"
    "Collective mode (--collective) sweeps message sizes like nccl-tests and prints time,\n"
    "algbw and busbw of the hvd runtime (full API: negotiation included), of the raw MPI\n"
    "collective, and of a ring-neighbour MPI_Sendrecv exchange (the ring's physical limit).\n"
    "\n"
    "Launching: -np N on one host re-runs hvdbench under Open MPI's mpirun (localhost,\n"
    "--bind-to none, idle ranks yield their core (mpi_yield_when_idle), --oversubscribe when\n"
    "N > cores); -H/--hostfile pass hosts on (add mpirun flags with --mpi-args). Started by\n"
    "an outer mpirun (OMPI_COMM_WORLD_SIZE set) it uses that world. Runtime knob flags become\n"
    "HVD_* environment variables of the ranks (HVD_*/HOROVOD_* set by hand work too).\n"
    "\n"
    "--device gpu puts the tensors in GPU memory (one GPU per rank: local rank modulo the GPUs\n"
    "of the node) and builds the runtime on the NCCL backend, communicators bootstrapped over\n"
    "MPI. Collective mode then prints, next to hvd, ncclAllReduce called directly on the same\n"
    "buffers (nccl-tests timing); model mode replays the gradients as device tensors. Without\n"
    "the NCCL backend in this build: exit 2; without a usable GPU: exit 1 (one line, why).\n";

const char* kFooter =
    "\nExamples:\n"
    "  hvdbench --list-models\n"
    "  hvdbench --model resnet101 -np 8 --report resnet101.json\n"
    "  hvdbench --model resnet50 -np 4 --gpu V100 --batch-size 32 --steps 20\n"
    "  hvdbench --model vgg16 -np 4 --fusion-threshold-mb 64 --cycle-time-ms 5 \\\n"
    "           --timeline-filename /tmp/vgg16.json\n"
    "  hvdbench --model my_model.json -np 2 --compute-scale 0.5\n"
    "  mpirun -np 16 -H a:8,b:8 hvdbench --model inception3\n"
    "  hvdbench --collective allreduce -b 8 -e 256M -f 2 -np 4 --check\n"
    "  hvdbench --collective allgather -b 1K -e 64M --dtype float16 -np 2 --algorithm ring\n"
    "  hvdbench --collective allreduce --device gpu -b 1M -e 256M -np 8 --check\n"
    "  hvdbench --model resnet50 --device gpu -np 4\n"
    "  hvdbench --calibrate calib_np4.json -np 4   (then \"calibration\" in a scenario)\n"
    "\n"
    "Exit codes: 0 success, 1 runtime failure, 2 bad input.\n"
    "Report (--report FILE): JSON as in docs/formats.md plus FILE with .csv, written by rank 0.\n";

const std::vector<std::string> kCollectives = {"allreduce", "allgather", "broadcast", "alltoall",
                                               "reducescatter"};

// Whether an option was on the command line. The holders' defaults (-1, 0) stand for "not
// given", so a given value must never be mistaken for one: --batch-size 0 is an error, not
// "the trace's batch", and --fusion-threshold-mb -1 is an error, not "the default".
bool given(const CLI::App& app, const char* name) { return app.count(name) > 0; }

std::unique_ptr<CLI::App> make_app(Options* o, KnobFlags* k) {
  auto app = std::make_unique<CLI::App>(kDescription, "hvdbench");
  app->footer(kFooter);
  app->get_formatter()->column_width(34);
  const char* what = "What to run";
  app->add_option("--model", o->model, "builtin model name or path to a .json model trace")
      ->group(what);
  app->add_flag("--list-models", o->list_models, "list the builtin models and exit")->group(what);
  app->add_option("--collective", o->collective,
                  "collective mode: allreduce|allgather|broadcast|alltoall|reducescatter")
      ->group(what);
  app->add_option("--calibrate", o->calibrate,
                  "measure links, copy/reduce and runtime overhead; write calibration JSON here "
                  "(uses -n/-w)")
      ->group(what);

  add_launch_flags(*app, o);
  const char* where = "Launch (horovodrun-style)";
  app->add_option("--device", o->device,
                  "cpu (host memory, default) or gpu (device memory, NCCL backend)")
      ->group(where);

  const char* model = kModelGroup;
  app->add_option("--gpu", o->gpu, "scale compute from the trace's reference GPU to this one")
      ->group(model);
  app->add_option("--precision", o->precision,
                  "fp32 (default), tf32, fp16 or bf16: the --gpu's measured throughput in it, and "
                  "2-byte gradients under fp16/bf16")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}))
      ->group(model);
  app->add_option("--seq-len", o->seq_len, "sequence length of bert-large or gpt2-xl (default: 128, 1024)")
      ->check(CLI::Range(1, 1 << 20))
      ->group(model);
  app->add_option("--compute-scale", o->compute_scale,
                  "multiply compute times by this (default 1; with --gpu: on top)")
      ->group(model);
  app->add_option("--batch-size", o->batch_size, "per-rank batch (default: the trace's)")
      ->group(model);
  app->add_option("--warmup", o->warmup, "warm-up steps (default 2)")->group(model);
  app->add_option("--steps", o->steps, "measured steps (default 10)")->group(model);
  app->add_flag("--ensemble", o->ensemble,
                "every rank trains its own model: no gradient exchange, one final broadcast")
      ->group(model);
  app->add_option("--single-rate", o->single_rate,
                  "images/s of one rank for the efficiency (default: measure it)")
      ->group(model);
  app->add_flag("--no-baseline", o->no_baseline, "skip the 1-rank baseline (no efficiency)")
      ->group(model);
  app->add_option("--optimizer-ms", o->optimizer_ms, "optimizer compute per step (default 0)")
      ->group(model);
  app->add_option("--accumulation-steps", o->accumulation_steps,
                  "micro-batches per allreduce, 1 to 4096 (Horovod's backward_passes_per_step; default 1)")
      ->check(CLI::Range(1, 4096))
      ->group(model);
  app->add_flag("--allreduce-post-accumulation", o->post_accumulation,
               "allreduce every gradient once the last backward pass of the step has ended (NVIDIA's BERT "
               "scripts' --allreduce_post_accumulation), not each as the backward pass produces it")
      ->group(model);
  app->add_option("--optimizer", o->optimizer,
                  "sgd (default; what the measured throughputs ran), momentum, adam or lamb: the update's "
                  "memory traffic beyond SGD's, on --gpu (else the trace's reference GPU)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam", "lamb"}))
      ->group(model);
  app->add_option("--report", o->report, "write the report as JSON here (and .csv next to it)")
      ->group(model);
  app->add_option("--label", o->label, "label of the run in the report")->group(model);
  app->add_flag("-q,--quiet", o->quiet, "no progress lines on stderr")->group(model);

  const char* coll = kCollectiveGroup;
  app->add_option("-b,--minbytes", k->min_bytes, "smallest size (e.g. 8, 4K, 1M; default 32M)")
      ->group(coll);
  app->add_option("-e,--maxbytes", k->max_bytes, "largest size (default 32M)")->group(coll);
  app->add_option("-f,--stepfactor", o->step_factor, "size multiplier between steps (>= 2)")
      ->group(coll);
  app->add_option("--dtype", o->dtype,
                  "uint8|int8|int32|int64|float16|bfloat16|float32|float64 (default float32)")
      ->group(coll);
  app->add_option("--op", o->op, "sum|average|min|max|product (default sum)")->group(coll);
  app->add_flag("-c,--check", o->check, "verify results (#wrong column)")->group(coll);
  app->add_option("-n,--iters", o->iters, "timed iterations per size (default 20)")->group(coll);
  app->add_option("-w,--warmup-iters", o->warmup_iters, "warm-up iterations (default 5)")
      ->group(coll);
  app->add_option("--rounds", o->rounds,
                  "measure each size R times, alternating hvd and its peers; print the median "
                  "(default 1)")
      ->group(coll);

  add_knob_flags(*app, k);
  return app;
}

std::string check_model_mode(const CLI::App& app, const Options& o) {
  if (o.np < 1) return "-np must be at least 1 (got " + std::to_string(o.np) + ")";
  if (o.steps < 1) return "--steps must be at least 1 (got " + std::to_string(o.steps) + ")";
  if (o.warmup < 0) return "--warmup must be >= 0 (got " + std::to_string(o.warmup) + ")";
  if (given(app, "--batch-size") && o.batch_size < 1)
    return "--batch-size must be at least 1 (got " + std::to_string(o.batch_size) + ")";
  if (!(o.compute_scale > 0 && std::isfinite(o.compute_scale)))
    return "--compute-scale must be a finite number > 0 (got " + fmt_number(o.compute_scale) + ")";
  if (given(app, "--single-rate") && !(o.single_rate > 0 && std::isfinite(o.single_rate)))
    return "--single-rate must be a finite number > 0 (got " + fmt_number(o.single_rate) + ")";
  // At most a day per step, as the model-trace bound (docs/models.md).
  if (!(o.optimizer_ms >= 0 && o.optimizer_ms <= 86400000))
    return "--optimizer-ms must be a number of milliseconds in [0, 86400000] (got " +
           fmt_number(o.optimizer_ms) + ")";
  if (o.ensemble && o.post_accumulation)
    return "--allreduce-post-accumulation: an ensemble (--ensemble) has no gradient allreduce to postpone";
  return "";
}

std::string check_collective_mode(const KnobFlags& k, Options* o, bool op_given) {
  if (std::find(kCollectives.begin(), kCollectives.end(), o->collective) == kCollectives.end())
    return "unknown collective '" + o->collective +
           "'; expected allreduce, allgather, broadcast, alltoall or reducescatter";
  if (!parse_dtype(o->dtype))
    return "unknown dtype '" + o->dtype +
           "'; expected uint8, int8, int32, int64, float16, bfloat16, float32 or float64";
  if (!parse_op(o->op) || *parse_op(o->op) == ReduceOp::kAdasum)
    return "unknown op '" + o->op + "'; expected sum, average, min, max or product";
  if (op_given && o->collective != "allreduce" && o->collective != "reducescatter")
    return "--op: " + o->collective + " does not reduce";
  auto b = parse_size(k.min_bytes);
  if (!b) return "-b/--minbytes: '" + k.min_bytes + "' is not a size (e.g. 8, 4K, 1M, 2G)";
  auto e = parse_size(k.max_bytes);
  if (!e) return "-e/--maxbytes: '" + k.max_bytes + "' is not a size (e.g. 8, 4K, 1M, 2G)";
  if (*b < 1) return "-b/--minbytes must be at least 1 byte";
  if (*b > *e)
    return "-b " + k.min_bytes + " is larger than -e " + k.max_bytes + " (empty size range)";
  if (o->step_factor < 2 || o->step_factor > (int64_t{1} << 30))
    return "-f/--stepfactor must be from 2 to 2^30 (got " + std::to_string(o->step_factor) + ")";
  if (o->iters < 1) return "-n/--iters must be at least 1";
  if (o->warmup_iters < 0) return "-w/--warmup-iters must be >= 0";
  if (o->rounds < 1) return "--rounds must be at least 1 (got " + std::to_string(o->rounds) + ")";
  if (o->np < 1) return "-np must be at least 1 (got " + std::to_string(o->np) + ")";
  o->min_bytes = *b;
  o->max_bytes = *e;
  return "";
}

// A flag of another mode given here, "" if none: it would be silently ignored, so it is an
// error that names it. `keep` lists the flags of `group` this mode uses too.
std::string foreign_flag(const CLI::App& app, const std::string& group, const std::string& mode,
                         std::initializer_list<const char*> keep = {}) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group() != group || opt->count() == 0) continue;
    const std::string name = opt->get_name();
    if (std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    return name + ": applies to " + mode + " only";
  }
  return "";
}

}  // namespace

void add_launch_flags(CLI::App& app, Options* o) {
  const char* where = "Launch (horovodrun-style)";
  app.add_option("--np,--num-proc", o->np, "number of ranks (also spelled -np); default 1")->group(where);
  app.add_option("-H,--hosts", o->hosts, "hosts and slots, e.g. host1:4,host2:4")->group(where);
  app.add_option("--hostfile", o->hostfile, "Open MPI hostfile")->group(where);
  app.add_option("--mpi-args", o->mpi_args, "extra arguments for mpirun (one string)")
      ->group(where);
}

// horovodrun spells the rank count "-np"; CLI11 would read that as "-n -p". With `app`,
// stops at the first positional argument (hvdrun's command keeps its own flags).
std::vector<std::string> normalise_args(int argc, const char* const* argv, const CLI::App* app) {
  std::vector<std::string> out;
  bool in_command = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!in_command) {
      // horovodrun's single-dash long names.
      if (a == "-np") a = "--np";
      else if (a.rfind("-np=", 0) == 0) a = "-" + a;
      else if (a == "-hostfile") a = "--hostfile";
      else if (a == "-cb") a = "--check-build";
      if (app && !a.empty() && a[0] == '-' && a.find('=') == std::string::npos) {
        const CLI::Option* opt = app->get_option_no_throw(a);
        if (opt && opt->get_type_size() != 0 && opt->get_expected_min() > 0 && i + 1 < argc) {  // its values
          for (int v = 1; v < opt->get_expected_min() && i + 1 < argc; ++v) {
            out.push_back(a);
            a = argv[++i];
          }
          out.push_back(a);
          a = argv[++i];
        }
      } else if (app && (a.empty() || a[0] != '-')) {
        in_command = true;
      }
    }
    out.push_back(a);
  }
  return out;
}



std::optional<int64_t> parse_size(const std::string& text) { return parse_sweep_size(text); }

std::vector<int64_t> size_sweep(int64_t min_bytes, int64_t max_bytes, int64_t factor) {
  std::vector<int64_t> out;
  for (int64_t s = min_bytes; s <= max_bytes; s *= factor) {
    out.push_back(s);
    if (s > max_bytes / factor) break;
  }
  return out;
}

ParseResult parse_options(int argc, const char* const* argv, Options* out) {
  Options o;
  KnobFlags k;
  auto app = make_app(&o, &k);
  std::vector<std::string> args = normalise_args(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app->parse(args);
  } catch (const CLI::CallForHelp&) {
    return {kExitOk, app->help()};
  } catch (const CLI::CallForAllHelp&) {
    return {kExitOk, app->help()};
  } catch (const CLI::ParseError& e) {
    return {kExitBadInput, e.what()};
  }
  o.np_given = app->count("--np") > 0;
  ParseResult bad{kExitBadInput, ""};
  if (app->count("--report") && o.report.empty()) {
    bad.message = "--report: an empty path";
    return bad;
  }
  if (o.list_models) {
    *out = o;
    return {};
  }
  if (!o.calibrate.empty() && (!o.model.empty() || !o.collective.empty())) {
    bad.message = "--calibrate is a mode of its own; give it without --model/--collective";
    return bad;
  }
  if (!o.calibrate.empty()) {
    bad.message = foreign_flag(*app, kModelGroup, "--model", {"--quiet"});
    if (bad.message.empty()) bad.message = foreign_flag(*app, kCollectiveGroup, "--collective", {"--iters", "--warmup-iters"});
    if (!bad.message.empty()) return bad;
    bad.message = o.np < 1             ? "-np must be at least 1 (got " + std::to_string(o.np) + ")"
                  : o.iters < 1        ? "-n/--iters must be at least 1"
                  : o.warmup_iters < 0 ? "-w/--warmup-iters must be >= 0"
                                       : collect_knobs(*app, k, &o);
    if (!bad.message.empty()) return bad;
    *out = o;
    return {};
  }
  if (!o.collective.empty() && !o.model.empty()) {
    bad.message = "--model and --collective are two modes; give one of them";
    return bad;
  }
  if (o.collective.empty() && o.model.empty()) {
    bad.message =
        "nothing to run: give --model NAME, --collective OP, --calibrate FILE or --list-models "
        "(see --help)";
    return bad;
  }
  if (!o.hosts.empty() && !o.hostfile.empty()) {
    bad.message = "-H/--hosts and --hostfile are exclusive";
    return bad;
  }
  if (o.device != "cpu" && o.device != "gpu") {
    bad.message = "--device: unknown device '" + o.device + "'; expected cpu or gpu";
    return bad;
  }
  bad.message = o.collective.empty() ? foreign_flag(*app, kCollectiveGroup, "--collective")
                                     : foreign_flag(*app, kModelGroup, "--model");
  if (!bad.message.empty()) return bad;
  bad.message = o.collective.empty() ? check_model_mode(*app, o) : check_collective_mode(k, &o, app->count("--op") > 0);
  if (bad.message.empty()) bad.message = collect_knobs(*app, k, &o);
  if (!bad.message.empty()) return bad;
  *out = o;
  return {};
}

}  // namespace hvd::bench
