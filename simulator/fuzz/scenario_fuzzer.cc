// libFuzzer entry for the scenario loader: any bytes must give OK or one clear error,
// never a crash, a hang or undefined behaviour. Build: clang++ with -fsanitize=fuzzer
// (the simulator's CMake builds `scenario_fuzzer` when the compiler supports it).
// Overrides are fuzzed too: the first line (if it starts with "--set ") is one override.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hvd/sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  if (text.rfind("--set ", 0) == 0) {
    const size_t nl = text.find('\n');
    overrides.push_back(text.substr(6, nl == std::string::npos ? std::string::npos : nl - 6));
    text = nl == std::string::npos ? "" : text.substr(nl + 1);
  }
  hvd::sim::Scenario sc;
  (void)hvd::sim::parse_scenario(text, "fuzz.json", overrides, &sc);
  return 0;
}
