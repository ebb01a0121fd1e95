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

/// How a knob flag reads its value (CLI11 parses it as that type) and becomes the knob's.
enum class KnobFlagKind {
  kMiB,     ///< a number of MiB -> the knob's bytes
  kNumber,  ///< a number -> the knob as written
  kCount,   ///< an integer
  kSwitch,  ///< no value: given -> "1"
  kText,    ///< a string; empty: not set
};

/// One knob flag: a knob of HVD_KNOBS (hvd/config.h: its env name, type and the runtime's
/// checks come from there) as the command line spells it, with its own help and bounds.
struct KnobFlag {
  const char* knob;   ///< the HVD_KNOBS field
  const char* names;  ///< CLI11 names, "--allreduce-algorithm,--algorithm"
  KnobFlagKind kind;
  const char* help;
  double lo = 0, hi = 0;     ///< kMiB, kNumber, kCount: the value must be in [lo, hi] and finite
  const char* must = "";     ///< ... else "<flag> must be <must> (got <value>)"
};

/// The knob flags, in --help's order.
const std::vector<KnobFlag>& knob_flag_table();

// Knob flags: value holders filled by CLI11 (one per knob_flag_table() entry, the member of
// its kind), turned into HVD_* variables after parsing.
struct KnobFlags {
  struct Value {
    double number = -1;
    int64_t count = -1;
    bool on = false;
    std::string text;
  };
  std::vector<Value> values;
  // Raw size strings of collective mode (parsed by parse_size for nccl-tests spellings).
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
};

/// A number as the messages show it ("2e+06", "nan").
std::string fmt_number(double v);
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
