// The command-line flags hvdbench and hvdrun share: where the ranks run (-np, -H,
// --hostfile, --mpi-args) and the runtime knobs that become HVD_* variables of the ranks.
// Include only from .cc files (it pulls in CLI11).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace hvd::bench {

// Knob flags: value holders filled by CLI11, turned into HVD_* variables after parsing.
struct KnobFlags {
  double fusion_threshold_mb = -1;
  double cycle_time_ms = -1;
  int64_t cache_capacity = -1;
  bool hierarchical_allreduce = false;
  bool hierarchical_allgather = false;
  std::string timeline;
  bool timeline_mark_cycles = false;
  bool autotune = false;
  std::string allreduce_algorithm;
  std::string log_level;
  int64_t ranks_per_node = -1;
  // Raw size strings of collective mode (parsed by parse_size for nccl-tests spellings).
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
};

/// Adds -np/--np, -H/--hosts, --hostfile and --mpi-args (into *o).
void add_launch_flags(CLI::App& app, Options* o);
/// Adds the runtime knob flags (into *k).
void add_knob_flags(CLI::App& app, KnobFlags* k);
/// Turns the knob flags given on the command line into o->knob_env (HVD_* variable ->
/// value), checked with the runtime's own rules; returns "" or the error line.
std::string collect_knobs(const CLI::App& app, const KnobFlags& k, Options* o);
/// argv[1..] with horovodrun's "-np" spelled "--np" (CLI11 would read "-n -p"). With
/// stop_at_command, only up to the first positional argument (a command's own flags stay).
std::vector<std::string> normalise_args(int argc, const char* const* argv, const CLI::App* app = nullptr);

}  // namespace hvd::bench
