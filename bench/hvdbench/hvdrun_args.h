// hvdrun's command line, parsed and checked without side effects: what main() runs, or
// the exit code and the one line (or help text) to print instead. Kept apart from main()
// so that a fuzzer can feed it any argv (fuzz/hvdrun_fuzzer.cc).
#pragma once

#include <string>
#include <vector>

#include "elastic_driver.h"
#include "options.h"

namespace hvd::bench {

/// What hvdrun does with its arguments.
struct HvdrunPlan {
  enum class Mode { kExit, kMpi, kTcp, kElastic, kRankStatus };
  Mode mode = Mode::kExit;
  int exit_code = kExitOk;      ///< kExit: the code to exit with
  std::string message;          ///< kExit with code 2: the error, one line (no "hvdrun: ")
  std::string out;              ///< kExit with code 0: help or --check-build text for stdout
  Options o;                    ///< launch options and knobs (knob variables not yet exported)
  ElasticOptions elastic;       ///< kElastic
  std::vector<std::string> cmd; ///< the command and its arguments
  double start_timeout_s = 0;   ///< kTcp
  std::string rank_status_dir;  ///< kRankStatus
};

/// Parses and checks hvdrun's argv (the checks that need the network, -H's names, come
/// later: check_hosts).
HvdrunPlan plan_hvdrun(int argc, const char* const* argv);

}  // namespace hvd::bench
