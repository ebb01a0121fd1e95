// JSON trace format: round trips, the example user trace, and one clear error per mistake.
#include "hvd/workloads/trace_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hvd/workloads/model_registry.h"

namespace hvd::workloads {
namespace {

using nlohmann::json;

// A small valid trace (timing style: per-layer fwd_s/bwd_s) that each error test breaks once.
json valid_trace() {
  return json::parse(R"({
    "name": "two-layer", "reference_gpu": "P100", "reference_batch": 32,
    "layers": [{"name": "l0", "fwd_s": 0.001, "bwd_s": 0.001},
               {"name": "l1", "fwd_s": 0.002, "bwd_s": 0.004}],
    "tensors": [{"name": "l1.w", "elements": 100, "shape": [10, 10], "dtype": "float32", "layer": "l1"},
                {"name": "l1.b", "elements": 10, "dtype": "float16", "layer": "l1"},
                {"name": "l0.w", "elements": 6, "dtype": "float32", "layer": "l0"}]
  })");
}

std::string slurp_example() {
  std::ifstream f(HVD_WORKLOADS_DIR "/examples/tiny_mlp.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string error_of(const json& doc) {
  Result<ModelTrace> r = parse_trace(doc.dump(), "t.json");
  return r.ok() ? std::string("(parsed)") : r.error();
}

TEST(TraceJson, ValidTraceDerivesTimesAndReadiness) {
  Result<ModelTrace> r = parse_trace(valid_trace().dump(), "t.json");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_DOUBLE_EQ(r->fwd_s, 0.003);
  EXPECT_DOUBLE_EQ(r->bwd_s, 0.005);
  EXPECT_DOUBLE_EQ(r->step_s, 0.008);
  EXPECT_DOUBLE_EQ(r->tensors[0].ready_s, 0.004);  // l1 runs backward first
  EXPECT_DOUBLE_EQ(r->tensors[2].ready_s, 0.005);
  EXPECT_EQ(r->params, 116);
  EXPECT_EQ(r->total_bytes(), 100 * 4 + 10 * 2 + 6 * 4);
  EXPECT_EQ(r->sample_unit, "samples");
  EXPECT_DOUBLE_EQ(r->reference_samples_per_sec, 32 / 0.008);
}

class BuiltinRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinRoundTrip, ToJsonThenParseGivesTheSameTrace) {
  const ModelTrace original = find_model(GetParam()).value();
  Result<ModelTrace> back = parse_trace(to_json(original), GetParam());
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, original);
  EXPECT_EQ(to_json(*back), to_json(original));
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinRoundTrip, ::testing::ValuesIn(builtin_model_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) c = (c == '-') ? '_' : c;
                           return n;
                         });

TEST(TraceJson, ExampleUserTraceSplitsStepByFlops) {
  Result<ModelTrace> r = load_trace_file(HVD_WORKLOADS_DIR "/examples/tiny_mlp.json");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->tensor_count(), 6u);
  EXPECT_EQ(r->params, 669706);
  EXPECT_DOUBLE_EQ(r->step_s, 0.0004);
  // Backward = 2x forward FLOPs except the first layer: (2*524288 + 2*10240 + 802816) / total.
  const double fwd = 802816 + 524288 + 10240, bwd = 802816 + 2 * (524288 + 10240);
  EXPECT_NEAR(r->bwd_s / r->fwd_s, bwd / fwd, 1e-12);
  EXPECT_NEAR(r->tensors.back().ready_s, r->bwd_s, 1e-15);
  EXPECT_NEAR(r->tensors[0].ready_s, r->bwd_s * 2 * 10240 / bwd, 1e-15);
  Result<ModelTrace> again = parse_trace(to_json(*r), "again");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*again, *r);
}

TEST(TraceJson, NotJsonAndEmpty) {
  EXPECT_EQ(parse_trace("", "t.json").error(),
            "t.json: empty document; expected a JSON model trace object");
  EXPECT_EQ(parse_trace("  \n", "t.json").error(),
            "t.json: empty document; expected a JSON model trace object");
  const std::string e = parse_trace("{\"name\": ", "t.json").error();
  EXPECT_EQ(e.rfind("t.json: not valid JSON: ", 0), 0u) << e;
  EXPECT_EQ(parse_trace("[1, 2]", "t.json").error(),
            "t.json: (root): [1,2] is not a JSON object (a model trace)");
}

TEST(TraceJson, NegativeElements) {
  json doc = valid_trace();
  doc["tensors"][2]["elements"] = -5;
  EXPECT_EQ(error_of(doc), "t.json: tensors[2].elements: -5 is not a positive integer");
  doc["tensors"][2]["elements"] = 2.5;
  EXPECT_EQ(error_of(doc), "t.json: tensors[2].elements: 2.5 is not a positive integer");
}

TEST(TraceJson, WrongType) {
  json doc = valid_trace();
  doc["name"] = 7;
  EXPECT_EQ(error_of(doc), "t.json: name: 7 is not a string");
  doc = valid_trace();
  doc["tensors"] = json::parse(R"([["a", 1]])");
  EXPECT_EQ(error_of(doc), "t.json: tensors[0]: [\"a\",1] is not a tensor object");
  doc = valid_trace();
  doc["layers"][1]["bwd_s"] = "4ms";
  EXPECT_EQ(error_of(doc), "t.json: layers[1].bwd_s: \"4ms\" is not a number >= 0");
}

TEST(TraceJson, MissingField) {
  json doc = valid_trace();
  doc["tensors"][1].erase("dtype");
  EXPECT_EQ(error_of(doc), "t.json: tensors[1].dtype: missing; expected a non-empty string");
  doc = valid_trace();
  doc.erase("reference_batch");
  EXPECT_EQ(error_of(doc), "t.json: reference_batch: missing; expected a positive integer");
  doc = valid_trace();
  doc.erase("tensors");
  EXPECT_EQ(error_of(doc),
            "t.json: tensors: missing; expected a non-empty array of tensor objects");
}

TEST(TraceJson, UnknownDtypeListsKnownOnes) {
  json doc = valid_trace();
  doc["tensors"][0]["dtype"] = "float33";
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[0].dtype: \"float33\" is not a known dtype (float32, float16, "
            "bfloat16, float64, int32, int64, int8, uint8)");
}

TEST(TraceJson, ConsistencyErrors) {
  json doc = valid_trace();
  doc["tensors"][0]["shape"] = {10, 11};
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[0].shape: [10,11] is not a shape whose product (110) equals "
            "elements (100)");
  doc = valid_trace();
  doc["tensors"][1]["layer"] = "l7";
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[1].layer: \"l7\" is not the name of an entry in layers[]");
  doc = valid_trace();
  doc["tensors"][1]["name"] = "l1.w";
  EXPECT_EQ(error_of(doc), "t.json: tensors[1].name: \"l1.w\" is not a unique tensor name");
  doc = valid_trace();
  doc["params"] = 117;
  EXPECT_EQ(error_of(doc), "t.json: params: 117 is not the sum of tensors[].elements (116)");
  doc = valid_trace();
  doc["tenssors"] = json::array();
  EXPECT_NE(error_of(doc).find("t.json: tenssors: unknown field; expected one of"),
            std::string::npos);
}

TEST(TraceJson, TimingErrors) {
  json doc = valid_trace();
  doc["layers"][0].erase("bwd_s");
  EXPECT_EQ(error_of(doc),
            "t.json: layers[0].bwd_s: missing; expected a number >= 0 (a layer gives both fwd_s "
            "and bwd_s, or neither)");
  doc = valid_trace();
  doc["tensors"][2]["ready_s"] = 0.001;
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[2].ready_s: 0.001 is not in gradient-ready order (>= the previous "
            "tensor's 0.004000); list tensors in the order backprop makes them ready");
  doc = valid_trace();
  doc["layers"] = {{{"name", "l0"}}, {{"name", "l1"}}};
  EXPECT_EQ(error_of(doc),
            "t.json: step_s: missing; expected a number > 0 (or layers with fwd_s and bwd_s, or "
            "fwd_s and bwd_s)");
  doc = valid_trace();
  doc["reference_gpu"] = "K80";
  EXPECT_EQ(
      error_of(doc).rfind("t.json: reference_gpu: \"K80\" is not a known GPU: unknown GPU", 0), 0u);
}

TEST(TraceJson, LayerlessTraceNeedsReadyTimes) {
  json doc = json::parse(R"({"name": "flat", "reference_gpu": "V100", "reference_batch": 8,
    "step_s": 0.3, "tensors": [{"name": "w", "elements": 4, "dtype": "float32", "ready_s": 0.1},
                               {"name": "v", "elements": 4, "dtype": "float32"}]})");
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[1].ready_s: missing; expected a number >= 0 (or a layer to derive "
            "it from)");
  doc["tensors"][1]["ready_s"] = 0.2;
  Result<ModelTrace> r = parse_trace(doc.dump(), "t.json");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_DOUBLE_EQ(r->fwd_s, 0.1);
  EXPECT_DOUBLE_EQ(r->bwd_s, 0.2);
  doc["tensors"][1]["ready_s"] = 0.25;
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[1].ready_s: 0.25 is not within the backward pass (<= bwd_s = "
            "0.200000)");
}

// Hostile documents: each one line with the JSON path, never a crash.
TEST(TraceJson, DeepNestingIsBounded) {
  json doc = valid_trace();
  doc["description"] = "@@";
  std::string text = doc.dump();
  text.replace(text.find("\"@@\""), 4, std::string(100000, '[') + std::string(100000, ']'));
  const std::string e = parse_trace(text, "t.json").error();
  EXPECT_EQ(e.rfind("t.json: description[0][0]", 0), 0u) << e.substr(0, 300);
  EXPECT_NE(e.find(": nested deeper than 64 levels; expected at most 64 nested arrays/objects"),
            std::string::npos) << e.substr(0, 300);
  EXPECT_LE(e.size(), 300u);
}

TEST(TraceJson, NumberBeyondDoubleNamesThePath) {
  std::string text = valid_trace().dump();
  text.replace(text.find("\"elements\":100"), 14, "\"elements\":1e400");
  EXPECT_EQ(parse_trace(text, "t.json").error(),
            "t.json: tensors[0].elements: [json.exception.out_of_range.406] number overflow "
            "parsing '1e400'; expected a finite number");
}

TEST(TraceJson, DuplicateKeysAreRejected) {
  std::string text = valid_trace().dump();
  text.replace(text.find("\"dtype\":\"float16\""), 17, "\"dtype\":\"float16\",\"dtype\":\"float32\"");
  EXPECT_EQ(parse_trace(text, "t.json").error(),
            "t.json: tensors[1].dtype: duplicate key \"dtype\"; expected each key once per object");
}

TEST(TraceJson, AbsurdStepTimes) {
  json doc = json::parse(R"({"name": "flat", "reference_gpu": "V100", "reference_batch": 8,
    "step_s": 1e300, "tensors": [{"name": "w", "elements": 4, "dtype": "float32", "ready_s": 0}]})");
  EXPECT_EQ(error_of(doc),
            "t.json: step_s: 1e+300 is not a number > 0 and <= 86400 (a day, in seconds)");
  doc["step_s"] = 0;
  EXPECT_EQ(error_of(doc), "t.json: step_s: 0 is not a number > 0");
  doc["step_s"] = -2;
  EXPECT_EQ(error_of(doc), "t.json: step_s: -2 is not a number > 0");
  doc["step_s"] = 1e-300;
  EXPECT_EQ(error_of(doc),
            "t.json: step_s: the step time (fwd_s + bwd_s) is 1e-300 s; expected between 1e-09 s "
            "and 86400 s (a day)");
  json timed = valid_trace();  // each layer within a day, their sum not
  timed["layers"][0]["fwd_s"] = 50000;
  timed["layers"][1]["bwd_s"] = 50000;
  EXPECT_EQ(error_of(timed),
            "t.json: step_s: the step time (fwd_s + bwd_s) is 100000 s; expected between 1e-09 s "
            "and 86400 s (a day)");
}

TEST(TraceJson, GivenReadyTimesAreCheckedWithFlopsLayers) {
  json doc = json::parse(slurp_example());
  doc["tensors"][0]["ready_s"] = 0.0002;
  doc["tensors"][1]["ready_s"] = 0.0001;
  EXPECT_EQ(error_of(doc),
            "t.json: tensors[1].ready_s: 0.0001 is not in gradient-ready order (>= the previous "
            "tensor's 0.000200); list tensors in the order backprop makes them ready");
  doc = json::parse(slurp_example());
  doc["tensors"][5]["ready_s"] = 5.0;
  EXPECT_EQ(error_of(doc).rfind("t.json: tensors[5].ready_s: 5.0 is not within the backward pass", 0),
            0u) << error_of(doc);
  doc = json::parse(slurp_example());  // a given ready_s stands (it was overwritten)
  doc["tensors"][0]["ready_s"] = 0.000001;  // before fc2's backward ends (2.55e-6 s)
  Result<ModelTrace> r = parse_trace(doc.dump(), "t.json");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_DOUBLE_EQ(r->tensors[0].ready_s, 0.000001);
}

TEST(TraceJson, ElementsAndShapesAreBounded) {
  json doc = valid_trace();
  doc["tensors"][2]["elements"] = (std::int64_t{1} << 40) + 1;
  EXPECT_EQ(error_of(doc), "t.json: tensors[2].elements: 1099511627777 is not a positive integer "
                           "<= 2^40 (1099511627776)");
  doc = valid_trace();  // the product would overflow int64
  doc["tensors"][0]["shape"] = {std::int64_t{1} << 62, 4};
  EXPECT_EQ(error_of(doc), "t.json: tensors[0].shape: [4611686018427387904,4] is not a shape whose "
                           "product (more than 2^40) equals elements (100)");
  doc = valid_trace();  // 2^40 float64 elements are 2^43 bytes: the 129th passes 2^50
  doc["tensors"] = json::array();
  for (int i = 0; i < 129; ++i) {
    doc["tensors"].push_back({{"name", std::to_string(i)}, {"elements", std::int64_t{1} << 40},
                              {"dtype", "float64"}, {"layer", "l0"}});
  }
  EXPECT_EQ(error_of(doc), "t.json: tensors[128].elements: 1099511627776 is not within the "
                           "trace's bound of 2^50 bytes (1 PiB) for all tensors together");
  doc["tensors"].erase(128);
  EXPECT_EQ(error_of(doc), "(parsed)");
}

TEST(TraceJson, LongNamesAreCutInMessages) {
  json doc = valid_trace();
  doc[std::string(10000, 'k')] = 1;
  const std::string unknown = error_of(doc);
  EXPECT_EQ(unknown.rfind("t.json: " + std::string(57, 'k') + "...: unknown field", 0), 0u)
      << unknown.substr(0, 200);
  doc = valid_trace();
  doc["reference_gpu"] = std::string(10000, 'G');
  EXPECT_LE(error_of(doc).size(), 400u);
  EXPECT_LE(find_model(std::string(10000, 'm')).error().size(), 400u);
}

TEST(TraceJson, MissingFileIsAnError) {
  EXPECT_EQ(load_trace_file("/no/such/trace.json").error(),
            "/no/such/trace.json: cannot open trace file");
}

}  // namespace
}  // namespace hvd::workloads
