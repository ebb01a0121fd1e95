// libFuzzer entry for the scenario loader: any bytes must give OK or one clear error,
// never a crash, a hang or undefined behaviour. Build: HVD_FUZZ=ON with clang
// (docs/simulator.md, "Fuzzing"); seed corpus: tests/sim/corpus.
// Overrides are fuzzed too: the first line (if it starts with "--set ") is one override.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
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
  hvd::Status s = hvd::sim::parse_scenario(text, "fuzz.json", overrides, &sc);
  // The contract: bad input is kInvalidArgument, one line starting with the source.
  if (!s.ok() && (s.code() != hvd::StatusCode::kInvalidArgument ||
                  s.message().rfind("fuzz.json: ", 0) != 0 || s.message().find('\n') != std::string::npos))
    std::abort();
  return 0;
}
