// hvdbench command line: one Options struct for both modes (model replay and collective
// sweep), parsed with CLI11. Bad input is reported as one line and exit code 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hvd::bench {

/// Exit codes of hvdbench.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntimeFailure = 1;
inline constexpr int kExitBadInput = 2;

/// Environment variable set on the ranks hvdbench launches through mpirun.
inline constexpr const char* kLaunchedMarker = "HVDBENCH_LAUNCHED";

/// Everything the user asked for.
struct Options {
  // What to run.
  std::string model;               ///< builtin name or .json trace ("" in collective mode)
  bool list_models = false;        ///< print the models and exit
  std::string collective;          ///< "" (model mode) or allreduce|allgather|...
  std::string calibrate;           ///< --calibrate FILE: measure the machine, write FILE
  // Where to run.
  int np = 1;                      ///< ranks to start (ignored under an outer mpirun)
  bool np_given = false;           ///< -np was on the command line
  std::string hosts;               ///< -H host1:4,host2:4
  std::string hostfile;            ///< --hostfile
  std::string mpi_args;            ///< extra mpirun arguments (split on spaces)
  std::string device = "cpu";      ///< where tensors live: cpu (host memory, MPI) or gpu
                                   ///< (device memory, NCCL backend); both modes
  // Model mode.
  std::string gpu;                 ///< catalogue GPU to scale compute to ("" = trace's reference)
  std::string precision = "fp32";  ///< fp32, tf32, fp16, bf16: compute speed and gradient bytes
  int seq_len = 0;                 ///< sequence length of a built-in transformer (0: its own)
  double compute_scale = 1.0;      ///< extra multiplier of compute times
  int batch_size = 0;              ///< per-rank batch (0 = the trace's reference batch)
  int warmup = 2;                  ///< warm-up steps
  int steps = 10;                  ///< measured steps
  bool ensemble = false;           ///< no gradient exchange; one final broadcast
  double single_rate = 0;          ///< images/s of one rank (0 = measure it)
  bool no_baseline = false;        ///< do not measure the 1-rank baseline
  double optimizer_ms = 0;         ///< optimizer compute per step
  int accumulation_steps = 1;      ///< micro-batches per allreduce (backward_passes_per_step)
  bool post_accumulation = false;  ///< allreduce after the K-th backward pass, not during it
  std::string optimizer = "sgd";   ///< update rule: its memory traffic beyond SGD's per step
  double optimizer_extra_s = 0;    ///< that traffic's time on the GPU (set by model mode)
  std::string report;              ///< JSON report path (CSV next to it)
  std::string label;               ///< label of the run in the report
  bool quiet = false;              ///< no progress on stderr
  // Collective mode (nccl-tests style).
  int64_t min_bytes = 32 << 20;    ///< -b
  int64_t max_bytes = 32 << 20;    ///< -e
  int64_t step_factor = 2;         ///< -f
  std::string dtype = "float32";   ///< --dtype
  std::string op = "sum";          ///< --op
  bool check = false;              ///< --check
  int iters = 20;                  ///< -n
  int warmup_iters = 5;            ///< -w
  int rounds = 1;                  ///< --rounds: interleaved repetitions per size (median)
  // Runtime knobs given on the command line, as HVD_* variable -> value.
  std::map<std::string, std::string> knob_env;
};

/// Outcome of parsing: run (exit_code < 0) or exit now with exit_code.
struct ParseResult {
  int exit_code = -1;   ///< < 0: go on; else exit with it (0 after --help)
  std::string message;  ///< what to print (help text on stdout, error line on stderr)
};

/// Parses argv (accepts horovodrun's "-np N" spelling); validates values and ranges.
ParseResult parse_options(int argc, const char* const* argv, Options* out);
/// Parses "4K", "256M", "1G", "4096", "64MiB" into bytes; nullopt if not a size.
std::optional<int64_t> parse_size(const std::string& text);
/// The sizes swept from min to max by factor (inclusive of min; max if hit exactly).
std::vector<int64_t> size_sweep(int64_t min_bytes, int64_t max_bytes, int64_t factor);

}  // namespace hvd::bench
