// libFuzzer entry for the model-trace loader (the JSON that hvdbench --model FILE.json and
// hvdsim's workload.trace read): any bytes must give a trace or one clear error line, never
// a crash, a hang or undefined behaviour. Build: HVD_FUZZ=ON with clang (docs/simulator.md,
// "Fuzzing"); seed corpus: tests/bench/trace_corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hvd/workloads/trace_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hvd::workloads::Result<hvd::workloads::ModelTrace> t = hvd::workloads::parse_trace(text, "fuzz.json");
  // The contract: an error is one line starting with the source.
  if (!t && (t.error().rfind("fuzz.json: ", 0) != 0 || t.error().find('\n') != std::string::npos))
    std::abort();
  return 0;
}
