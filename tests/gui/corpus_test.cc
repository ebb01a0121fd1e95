// Every seed of the timeline fuzzer (tests/gui/corpus, also crashes it found) read by the
// normal build: each gives a trace or clear errors (one short line naming the file), never
// a crash. Run under the fuzzer's sanitizers with: timeline_fuzzer tests/gui/corpus/*.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/trace_model.h"
#include "core/trace_parser.h"

namespace hvdview {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(HVDVIEW_CORPUS)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TimelineCorpus, EverySeedGivesATraceOrClearErrors) {
  const std::vector<std::string> files = CorpusFiles();
  ASSERT_GE(files.size(), 20u) << "seeds missing in " << HVDVIEW_CORPUS;
  size_t with_events = 0, with_errors = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    LoadOptions small_chunks;  // also through the refill paths, as the fuzzer does
    small_chunks.chunk_bytes = 23;
    for (const LoadOptions& options : {LoadOptions{}, small_chunks}) {
      LoadResult r = LoadTimelines({file}, options);
      EXPECT_FALSE(r.cancelled);
      EXPECT_TRUE(!r.trace.empty() || !r.errors.empty() || !r.warnings.empty())
          << "neither events nor a message";
      EXPECT_LE(r.errors.size(), 2u);
      for (const LoadError& error : r.errors) {
        const std::string line = error.ToString();
        EXPECT_EQ(line.rfind(file + ": ", 0), 0u) << line;
        EXPECT_GT(error.message.size(), 5u);
        EXPECT_LE(error.message.size(), 300u) << line;  // values are cut, not dumped
        EXPECT_EQ(line.find('\n'), std::string::npos) << line;
      }
      for (const std::string& warning : r.warnings) EXPECT_LE(warning.size(), 400u);
      for (const std::string& name : r.trace.names) EXPECT_LE(name.size(), 4096u);
      if (r.trace.empty()) continue;
      EXPECT_LE(r.trace.min_time, r.trace.max_time);
      RangeStats(r.trace, r.trace.min_time, r.trace.max_time);
      CollectiveTimePerProcess(r.trace);
    }
    LoadResult r = LoadTimelines({file});
    with_events += !r.trace.empty();
    with_errors += !r.errors.empty();
  }
  EXPECT_GE(with_events, 5u);  // the seeds hold valid timelines too, not only broken ones
  EXPECT_GE(with_errors, 10u);
}

}  // namespace
}  // namespace hvdview
