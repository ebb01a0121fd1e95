// libFuzzer entry for the report readers (hvd/report/record.h): the JSON and CSV that hvdview
// opens, hvdsim --merge joins and the tests read back. Any bytes must give a document or one
// error line, never a crash, a hang or undefined behaviour; a document that was read must
// write back as CSV and read again to the same number of runs. The first byte picks the
// reader and the parts (JSON whole, JSON figures only, CSV). Build: HVD_FUZZ=ON with clang
// (docs/simulator.md, "Fuzzing"); seeds: tests/gui/data/report_*.json and *.csv.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "hvd/report/record.h"

namespace {

void one_line(const std::string& error) {
  if (error.empty() || error.find('\n') != std::string::npos || error.size() > 1000) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string error;
  std::optional<hvd::report::ReportDocument> doc;
  if (mode == 2) {
    doc = hvd::report::document_from_csv(text, &error);
  } else {
    doc = hvd::report::document_from_json(
        text, &error, mode == 0 ? hvd::report::RecordParts::kAll : hvd::report::RecordParts::kFigures);
  }
  if (!doc) {
    one_line(error);
    return 0;
  }
  // Round trip through CSV: the writer takes whatever the reader accepted.
  const std::string csv = hvd::report::to_csv(doc->runs);
  std::string again_error;
  auto again = hvd::report::document_from_csv(csv, &again_error);
  if (!again || again->runs.size() != doc->runs.size()) std::abort();
  return 0;
}
