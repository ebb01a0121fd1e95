// libFuzzer entry for hvdbench's command line (parse_options: every mode's flags, sizes,
// knob flags, horovodrun's -np spelling). The input is argv, arguments separated by NUL
// bytes. Any argv must parse, or give help (exit 0), or one error line with exit code 2 —
// never a crash or an exception out of the parser. Build: HVD_FUZZ=ON with clang
// (docs/simulator.md, "Fuzzing"); seeds: the lines of bench/hvdbench/fuzz/seeds.txt.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_argv.h"
#include "options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> args = hvd::bench::fuzz_argv("hvdbench", data, size);
  if (args.empty()) return 0;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  hvd::bench::Options o;
  const hvd::bench::ParseResult r = hvd::bench::parse_options(static_cast<int>(argv.size()), argv.data(), &o);
  if (r.exit_code == hvd::bench::kExitBadInput) {
    // One line (a value is echoed as given: a newline inside it is the input's own).
    if (r.message.empty() || r.message.size() > 4096) std::abort();
  } else if (r.exit_code > 0) {
    std::abort();  // the parser has no other failure
  }
  return 0;
}
