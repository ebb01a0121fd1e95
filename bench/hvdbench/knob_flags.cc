// The runtime knob flags of hvdbench and hvdrun, from HVD_KNOBS (hvd/config.h): the table
// below says which knobs have a flag and how the command line spells them; the variable
// each becomes (HVD_<ENV>) and the runtime's own checks come from the knob.
#include <CLI/CLI.hpp>
#include <cmath>
#include <map>

#include "cli_flags.h"
#include "hvd/config.h"

namespace hvd::bench {
namespace {

// The env suffix of each knob field ("fusion_threshold" -> "FUSION_THRESHOLD").
const std::map<std::string, std::string>& knob_env_names() {
#define HVD_KNOB_ENV(field, env, type, def, doc) {#field, env},
  static const std::map<std::string, std::string> names = {HVD_KNOBS(HVD_KNOB_ENV)};
#undef HVD_KNOB_ENV
  return names;
}

// "--allreduce-algorithm,--algorithm" -> "--allreduce-algorithm".
std::string first_name(const char* names) {
  const std::string n = names;
  return n.substr(0, n.find(','));
}

}  // namespace

const std::vector<KnobFlag>& knob_flag_table() {
  using K = KnobFlagKind;
  constexpr double kInt64Max = 9.2e18;
  static const std::vector<KnobFlag> table = {
      // At most 1 TiB: the byte count must fit the runtime's int64 threshold.
      {"fusion_threshold", "--fusion-threshold-mb", K::kMiB,
       "tensor fusion buffer in MiB (default 128; 0 disables fusion)", 0, 1048576, "a number of MiB in [0, 1048576]"},
      {"cycle_time_ms", "--cycle-time-ms", K::kNumber,
       "background cycle time (default 1; collective mode 0 = event-driven)", 0, INFINITY, "a finite number >= 0"},
      {"cache_capacity", "--cache-capacity", K::kCount, "response cache entries (0 disables)", 0, kInt64Max, ">= 0"},
      {"hierarchical_allreduce", "--hierarchical-allreduce", K::kSwitch, "allreduce inside nodes, then across"},
      {"hierarchical_allgather", "--hierarchical-allgather", K::kSwitch, "allgather inside nodes, then across"},
      {"timeline", "--timeline-filename", K::kText, "Chrome-trace timeline (per-rank files)"},
      {"timeline_mark_cycles", "--timeline-mark-cycles", K::kSwitch, "mark cycles in the timeline"},
      {"autotune", "--autotune", K::kSwitch,
       "HVD_AUTOTUNE=1: tune fusion threshold, cycle time and the on/off knobs while running (log: "
       "HVD_AUTOTUNE_LOG)"},
      {"allreduce_algorithm", "--allreduce-algorithm,--algorithm", K::kText, Config::knob_doc("allreduce_algorithm")},
      {"ranks_per_node", "--ranks-per-node", K::kCount,
       "every k consecutive ranks of a host count as one node (emulated nodes: hierarchical algorithms, "
       "--calibrate's across-node links)",
       1, kInt64Max, "at least 1"},
      {"log_level", "--log-level", K::kText, Config::knob_doc("log_level")},
      // horovodrun's spellings of the stall inspector's and the autotuner's knobs.
      {"stall_check_disable", "--no-stall-check", K::kSwitch, "turn the stall inspector off"},
      {"stall_check_time_s", "--stall-check-warning-time-seconds", K::kNumber,
       "warn about tensors pending longer than this (default 60)", 1e-9, INFINITY, "a finite number > 0"},
      {"stall_shutdown_time_s", "--stall-check-shutdown-time-seconds", K::kNumber,
       "fail operations stalled longer than this (default 0: never)", 0, INFINITY, "a finite number >= 0"},
      {"autotune_log", "--autotune-log-file", K::kText, "CSV log of the autotune samples (rank 0)"},
      {"autotune_warmup_samples", "--autotune-warmup-samples", K::kCount, "autotune: samples discarded at start",
       0, kInt64Max, ">= 0"},
      {"autotune_steps_per_sample", "--autotune-steps-per-sample", K::kCount,
       "autotune: cycles with allreduce work per sample", 1, kInt64Max, "at least 1"},
      {"autotune_bayes_opt_max_samples", "--autotune-bayes-opt-max-samples", K::kCount,
       "autotune: Bayesian samples of fusion threshold x cycle time", 1, kInt64Max, "at least 1"},
      {"autotune_gaussian_process_noise", "--autotune-gaussian-process-noise", K::kNumber,
       "autotune: Gaussian-process noise (scores standardised)", 1e-12, INFINITY, "a finite number > 0"},
  };
  return table;
}

void add_knob_flags(CLI::App& app, KnobFlags* k) {
  const char* group = "Runtime knobs (become HVD_* variables)";
  const std::vector<KnobFlag>& table = knob_flag_table();
  k->values.assign(table.size(), {});  // CLI11 keeps pointers into it: sized once, here
  for (size_t i = 0; i < table.size(); ++i) {
    const KnobFlag& f = table[i];
    KnobFlags::Value& v = k->values[i];
    switch (f.kind) {
      case KnobFlagKind::kMiB:
      case KnobFlagKind::kNumber: app.add_option(f.names, v.number, f.help)->group(group); break;
      case KnobFlagKind::kCount: app.add_option(f.names, v.count, f.help)->group(group); break;
      case KnobFlagKind::kSwitch: app.add_flag(f.names, v.on, f.help)->group(group); break;
      case KnobFlagKind::kText: app.add_option(f.names, v.text, f.help)->group(group); break;
    }
  }
}

// Turns the knob flags into HVD_* variables and checks them with the runtime's own rules.
std::string collect_knobs(const CLI::App& app, const KnobFlags& k, Options* o) {
  auto& env = o->knob_env;
  const std::vector<KnobFlag>& table = knob_flag_table();
  for (size_t i = 0; i < table.size() && i < k.values.size(); ++i) {
    const KnobFlag& f = table[i];
    const KnobFlags::Value& v = k.values[i];
    const std::string flag = first_name(f.names);
    const std::string var = "HVD_" + knob_env_names().at(f.knob);
    switch (f.kind) {
      case KnobFlagKind::kMiB:
      case KnobFlagKind::kNumber:
        if (app.count(flag) == 0) break;
        if (!(v.number >= f.lo && v.number <= f.hi && std::isfinite(v.number)))
          return flag + " must be " + f.must + " (got " + fmt_number(v.number) + ")";
        env[var] = f.kind == KnobFlagKind::kMiB ? std::to_string(static_cast<int64_t>(v.number * 1048576.0))
                                                : fmt_number(v.number);
        break;
      case KnobFlagKind::kCount:
        if (app.count(flag) == 0) break;
        if (static_cast<double>(v.count) < f.lo)
          return flag + " must be " + f.must + " (got " + std::to_string(v.count) + ")";
        env[var] = std::to_string(v.count);
        break;
      case KnobFlagKind::kSwitch:
        if (v.on) env[var] = "1";
        break;
      case KnobFlagKind::kText:
        if (!v.text.empty()) env[var] = v.text;
        break;
    }
  }
  Config c;
  for (const auto& [name, value] : env) {
    Status s = c.set(name, value);
    if (!s.ok()) return s.message();
  }
  Status s = c.validate();
  return s.ok() ? "" : s.message();
}

}  // namespace hvd::bench
