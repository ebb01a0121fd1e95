// The committed model-trace corpus (tests/bench/trace_corpus, also the seed corpus of the
// libFuzzer target trace_fuzzer) through the loader: each input gives a trace or one short
// line naming the source, never a crash, an exception or a huge message. The corpus holds
// the hostile shapes: 100k-deep arrays, 1e400, NaN/Infinity tokens, absurd elements and
// step times, duplicate keys, huge strings and keys, truncated and binary inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hvd/workloads/trace_json.h"

namespace hvd::workloads {
namespace {

TEST(TraceCorpus, EveryInputLoadsOrFailsWithOneShortLine) {
  int files = 0, ok = 0;
  for (const auto& e : std::filesystem::directory_iterator(HVD_TRACE_CORPUS_DIR)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    Result<ModelTrace> t = parse_trace(ss.str(), "corpus.json");
    ++files;
    if (t.ok()) {
      ++ok;
      EXPECT_FALSE(t->tensors.empty()) << e.path();
      EXPECT_GT(t->step_s, 0) << e.path();
      continue;
    }
    const std::string& m = t.error();
    EXPECT_EQ(m.rfind("corpus.json: ", 0), 0u) << e.path() << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << e.path() << ": " << m;
    EXPECT_LE(m.size(), 400u) << e.path() << ": " << m.substr(0, 400);
  }
  EXPECT_GE(files, 30);
  EXPECT_GE(ok, 4);
}

}  // namespace
}  // namespace hvd::workloads
