// The committed fuzzing corpus (tests/sim/corpus, also the seed corpus of the libFuzzer
// target scenario_fuzzer) through the loader: each input gives OK or one line of
// kInvalidArgument naming the source, never a crash or an exception.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hvd/sim/scenario.h"

namespace hvd::sim {
namespace {

TEST(ScenarioCorpus, EveryInputLoadsOrFailsCleanly) {
  int files = 0, ok = 0;
  for (const auto& e : std::filesystem::directory_iterator(HVD_SIM_CORPUS_DIR)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    std::vector<std::string> sets;
    if (text.rfind("--set ", 0) == 0) {  // same convention as the fuzzer
      const size_t nl = text.find('\n');
      sets.push_back(text.substr(6, nl == std::string::npos ? std::string::npos : nl - 6));
      text = nl == std::string::npos ? "" : text.substr(nl + 1);
    }
    Scenario sc;
    Status s = parse_scenario(text, "corpus.json", sets, &sc);
    ++files;
    if (s.ok()) {
      ++ok;
      EXPECT_FALSE(sc.points.empty()) << e.path();
      continue;
    }
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << e.path();
    EXPECT_EQ(s.message().rfind("corpus.json: ", 0), 0u) << e.path() << ": " << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << e.path() << ": " << s.message();
  }
  EXPECT_GE(files, 10);
  EXPECT_GE(ok, 3);
}

}  // namespace
}  // namespace hvd::sim
