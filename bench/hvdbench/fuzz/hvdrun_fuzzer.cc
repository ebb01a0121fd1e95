// libFuzzer entry for hvdrun's command line (plan_hvdrun: launch, knob, TCP and elastic
// flags, the command after them). The input is argv, arguments separated by NUL bytes.
// Any argv must give a plan, or help / --check-build text (exit 0), or one error line with
// exit code 2; never a crash or an exception out of the parser. Nothing is started and no
// name is resolved (plan_hvdrun has no side effects). Build: HVD_FUZZ=ON with clang
// (docs/simulator.md, "Fuzzing"); seeds: the lines of bench/hvdbench/fuzz/hvdrun_seeds.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_argv.h"
#include "hvdrun_args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> args = hvd::bench::fuzz_argv("hvdrun", data, size);
  if (args.empty()) return 0;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  using hvd::bench::HvdrunPlan;
  const HvdrunPlan p = hvd::bench::plan_hvdrun(static_cast<int>(argv.size()), argv.data());
  if (p.mode == HvdrunPlan::Mode::kExit) {
    if (p.exit_code == hvd::bench::kExitBadInput) {
      if (p.message.empty() || p.message.size() > 4096) std::abort();
    } else if (p.exit_code != hvd::bench::kExitOk || p.out.empty()) {
      std::abort();  // help and --check-build print something; nothing else exits early
    }
  } else if (p.cmd.empty() || p.o.np < 1) {
    std::abort();  // a plan always has a command and a rank count
  }
  return 0;
}
