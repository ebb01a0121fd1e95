// Strict JSON parsing (strict_json.h): depth bound, duplicate keys, every nlohmann exception
// as one short line with the JSON path, values cut in messages.
#include "hvd/workloads/strict_json.h"

#include <gtest/gtest.h>

#include <string>

namespace hvd::workloads {
namespace {

std::string error_of(const std::string& text, int max_depth = kMaxJsonDepth) {
  Result<nlohmann::json> r = parse_json_strict(text, "s.json", max_depth);
  return r.ok() ? std::string("(parsed)") : r.error();
}

TEST(StrictJson, ParsesOrdinaryDocuments) {
  Result<nlohmann::json> r = parse_json_strict(R"({"a": [1, {"b": 2.5}], "c": "x"})", "s.json");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ((*r)["a"][1]["b"], 2.5);
  EXPECT_EQ(error_of(std::string(64, '[') + std::string(64, ']')), "(parsed)");
}

TEST(StrictJson, DepthIsBounded) {
  const int n = 100000;
  EXPECT_EQ(error_of(std::string(65, '[') + std::string(65, ']')).substr(0, 10), "s.json: [0");
  const std::string deep = error_of(std::string(n, '[') + std::string(n, ']'));
  EXPECT_NE(deep.find("nested deeper than 64 levels; expected at most 64 nested arrays/objects"),
            std::string::npos) << deep;
  EXPECT_LE(deep.size(), 300u) << deep;
  std::string objects;
  for (int i = 0; i < n; ++i) objects += "{\"a\":";
  EXPECT_EQ(error_of(objects + "1" + std::string(n, '}'), 3),
            "s.json: a.a.a: nested deeper than 3 levels; expected at most 3 nested arrays/objects");
  EXPECT_EQ(error_of(R"({"t": [1, 2, [[[]]]]})", 3),
            "s.json: t[2][0]: nested deeper than 3 levels; expected at most 3 nested arrays/objects");
}

TEST(StrictJson, DuplicateKeysAreRejected) {
  EXPECT_EQ(error_of(R"({"name": "a", "name": "b"})"),
            "s.json: name: duplicate key \"name\"; expected each key once per object");
  EXPECT_EQ(error_of(R"({"t": [{"x": 1}, {"x": 1, "y": 2, "x": 3}]})"),
            "s.json: t[1].x: duplicate key \"x\"; expected each key once per object");
  EXPECT_EQ(error_of(R"([{"x": 1}, {"x": 2}])"), "(parsed)");  // same key, other objects
}

TEST(StrictJson, NumberOverflowNamesThePath) {
  EXPECT_EQ(error_of(R"({"t": [{"e": 1e400}]})"),
            "s.json: t[0].e: [json.exception.out_of_range.406] number overflow parsing '1e400'; "
            "expected a finite number");
  EXPECT_EQ(error_of("[1, -1e400]").rfind("s.json: [1]: [json.exception.out_of_range.406]", 0), 0u);
  const std::string big = error_of("[1" + std::string(5000, '0') + "]");
  EXPECT_EQ(big.rfind("s.json: [0]: [json.exception.out_of_range.406]", 0), 0u) << big;
  EXPECT_LE(big.size(), 200u);
}

TEST(StrictJson, ParseErrorsAreCut) {
  EXPECT_EQ(error_of("{\"a\": NaN}").rfind("s.json: not valid JSON: [json.exception.parse_error.101]", 0), 0u);
  EXPECT_EQ(error_of("[Infinity]").rfind("s.json: not valid JSON: ", 0), 0u);
  const std::string unterminated = error_of("{\"name\": \"" + std::string(100000, 'y'));
  EXPECT_EQ(unterminated.rfind("s.json: not valid JSON: ", 0), 0u) << unterminated;
  EXPECT_LE(unterminated.size(), 200u) << unterminated;
  EXPECT_EQ(unterminated.find('\n'), std::string::npos);
}

TEST(StrictJson, MessagesCutLongValuesAndKeys) {
  EXPECT_EQ(cut_text("short"), "short");
  EXPECT_EQ(cut_text(std::string(100, 'x')), std::string(57, 'x') + "...");
  EXPECT_EQ(show_json_value(nlohmann::json(std::string(100, 'x'))).size(), 60u);
  const std::string dup = error_of("{\"" + std::string(10000, 'k') + "\": 1, \"" +
                                   std::string(10000, 'k') + "\": 2}");
  EXPECT_LE(dup.size(), 250u) << dup;
  EXPECT_NE(dup.find("duplicate key"), std::string::npos) << dup;
}

// The shared parse (libs/json) hands each caller's formatter where it stopped: the open
// containers (outermost first), the key or element each is reading, what went wrong.
TEST(StrictJsonParse, TheFormatterSeesTheOpenContainersAtADuplicateKey) {
  std::string seen, message;
  auto format = [&](const strict_json::Failure& f) {
    seen = std::to_string(static_cast<int>(f.problem)) + ":";
    for (const strict_json::Open& o : f.open) {
      seen += o.array ? '[' : '.';
      seen += o.array ? std::to_string(o.started) + ']' : o.key;
    }
    return std::string("stopped");
  };
  EXPECT_FALSE(strict_json::parse(R"({"a": [1, 2, {"b": 1, "b": 2}]})", 64, format, &message));
  EXPECT_EQ(message, "stopped");
  EXPECT_EQ(seen, "1:.a[3].b");  // kDuplicateKey; the third element of a, its key b twice
}

TEST(StrictJsonParse, TooDeepNamesTheNewContainerAndTheBound) {
  std::string message;
  auto format = [](const strict_json::Failure& f) {
    return std::to_string(static_cast<int>(f.problem)) + " " + std::to_string(f.open.size()) + " " +
           (f.array ? "array" : "object") + " " + std::to_string(f.max_depth);
  };
  EXPECT_FALSE(strict_json::parse(R"({"x": [[{"y": 1}]]})", 3, format, &message));
  EXPECT_EQ(message, "0 3 object 3");  // kTooDeep: {, [, [ open, the { inside went past 3
  EXPECT_TRUE(strict_json::parse(R"({"x": [[1]]})", 3, format, &message));
}

}  // namespace
}  // namespace hvd::workloads
