// The generated CNN traces against the public reference facts (cnn-models.json): totals,
// every tensor's name/elements/shape/order, per-layer forward MACs, and ready times.
#include "hvd/workloads/cnn_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "hvd/workloads/model_registry.h"

namespace hvd::workloads {
namespace {

using nlohmann::json;

// The reference file shipped in tests/data/reference, or null when it cannot be read.
const json* reference() {
  static const json doc = [] {
    std::ifstream in(HVD_CNN_REFERENCE_JSON);
    return in ? json::parse(in, nullptr, false) : json();
  }();
  return doc.is_object() ? &doc : nullptr;
}

ModelTrace build(const std::string& name, CnnCostModel model = CnnCostModel::kFlops) {
  CnnOptions options;
  options.cost_model = model;
  if (name == "resnet50") return resnet50_trace(options);
  if (name == "resnet101") return resnet101_trace(options);
  if (name == "vgg16") return vgg16_trace(options);
  return inception3_trace(options);
}

class CnnReferenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NE(reference(), nullptr) << "cannot read " << HVD_CNN_REFERENCE_JSON;
    ref_ = &(*reference())["models"][GetParam()];
    trace_ = build(GetParam());
  }
  const json* ref_ = nullptr;
  ModelTrace trace_;
};

TEST_P(CnnReferenceTest, TotalsMatchReference) {
  EXPECT_EQ(trace_.params, (*ref_)["params_total"].get<std::int64_t>());
  EXPECT_EQ(trace_.total_elements(), trace_.params);
  EXPECT_EQ(trace_.tensor_count(), (*ref_)["n_tensors"].get<std::size_t>());
  EXPECT_EQ(trace_.total_bytes(), (*ref_)["grad_bytes_fp32"].get<std::int64_t>());
  EXPECT_NEAR(trace_.fwd_flops() / 1e9, (*ref_)["fwd_gflops_per_image"].get<double>(), 1e-4);
}

TEST_P(CnnReferenceTest, ThousandClassVariantMatchesReference) {
  CnnOptions options;
  options.num_classes = 1000;
  ModelTrace t = GetParam() == "resnet50"    ? resnet50_trace(options)
                 : GetParam() == "resnet101" ? resnet101_trace(options)
                 : GetParam() == "vgg16"     ? vgg16_trace(options)
                                             : inception3_trace(options);
  EXPECT_EQ(t.params, (*ref_)["params_total_1000_classes"].get<std::int64_t>());
}

TEST_P(CnnReferenceTest, EveryTensorInBackpropOrder) {
  const json& tensors = (*ref_)["tensors_backprop_order"];
  ASSERT_EQ(trace_.tensors.size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = trace_.tensors[i];
    SCOPED_TRACE("tensor " + std::to_string(i) + " " + t.name);
    EXPECT_EQ(t.name, tensors[i][0].get<std::string>());
    EXPECT_EQ(t.elements, tensors[i][1].get<std::int64_t>());
    EXPECT_EQ(t.shape, tensors[i][2].get<std::vector<std::int64_t>>());
    EXPECT_EQ(t.layer, tensors[i][3].get<std::string>());
    EXPECT_EQ(t.dtype, "float32");
  }
}

TEST_P(CnnReferenceTest, LayersMatchReferenceMacs) {
  const json& layers = (*ref_)["layers_forward_order"];
  ASSERT_EQ(trace_.layers.size(), layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    SCOPED_TRACE(trace_.layers[i].name);
    EXPECT_EQ(trace_.layers[i].name, layers[i]["layer"].get<std::string>());
    EXPECT_EQ(trace_.layers[i].type, layers[i]["type"].get<std::string>());
    EXPECT_DOUBLE_EQ(trace_.layers[i].fwd_flops, 2.0 * layers[i]["fwd_macs"].get<double>());
  }
}

TEST_P(CnnReferenceTest, StepTimeIsPublishedThroughput) {
  const double ips = (*ref_)["p100_images_per_sec"]["value"].get<double>();
  EXPECT_EQ(trace_.reference_gpu, "P100");
  EXPECT_EQ(trace_.reference_batch, 64);
  EXPECT_DOUBLE_EQ(trace_.reference_samples_per_sec, ips);
  EXPECT_NEAR(trace_.step_s, 64.0 / ips, 1e-12);
  EXPECT_NEAR(trace_.fwd_s + trace_.bwd_s, trace_.step_s, 1e-12);
  double fwd = 0, bwd = 0;
  for (const auto& l : trace_.layers) fwd += l.fwd_s, bwd += l.bwd_s;
  EXPECT_NEAR(fwd, trace_.fwd_s, 1e-9);
  EXPECT_NEAR(bwd, trace_.bwd_s, 1e-9);
  // FLOPs rule: backward is 2x forward except the first layer, so the ratio is just under 2.
  EXPECT_GT(trace_.bwd_s / trace_.fwd_s, 1.95);
  EXPECT_LT(trace_.bwd_s / trace_.fwd_s, 2.0);
  EXPECT_FALSE(trace_.reference_source.empty());
}

// The reference rounds ready_frac to 5 decimals, so the flops model agrees within 1e-5 + 1e-9;
// the tolerance 2e-5 covers that rounding and nothing else (our cost model is the same rule).
TEST_P(CnnReferenceTest, ReadyTimesMatchReadyFracFlops) {
  const json& tensors = (*ref_)["tensors_backprop_order"];
  double prev = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(trace_.tensors[i].name);
    const double frac = trace_.tensors[i].ready_s / trace_.bwd_s;
    EXPECT_NEAR(frac, tensors[i][4].get<double>(), 2e-5);
    EXPECT_GE(trace_.tensors[i].ready_s, prev);
    prev = trace_.tensors[i].ready_s;
  }
  EXPECT_NEAR(prev, trace_.bwd_s, 1e-12);
}

// The hybrid model reproduces the reference's ready_frac_hybrid column: its alpha/beta are a
// two-point fit of the reference's per-layer hybrid times (max deviation seen: 5.6e-6), so the
// same 2e-5 rounding tolerance applies.
TEST_P(CnnReferenceTest, HybridReadyTimesMatchReadyFracHybrid) {
  const ModelTrace hybrid = build(GetParam(), CnnCostModel::kHybrid);
  const json& tensors = (*ref_)["tensors_backprop_order"];
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(hybrid.tensors[i].name);
    EXPECT_NEAR(hybrid.tensors[i].ready_s / hybrid.bwd_s, tensors[i][5].get<double>(), 2e-5);
  }
  EXPECT_EQ(hybrid.params, trace_.params);
  EXPECT_NEAR(hybrid.step_s, trace_.step_s, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Cnns, CnnReferenceTest,
                         ::testing::Values("resnet50", "resnet101", "vgg16", "inception3"),
                         [](const auto& info) { return info.param; });

TEST(CnnModels, Resnet101ShapesAtStageBoundaries) {
  const ModelTrace t = resnet101_trace();
  ASSERT_FALSE(t.tensors.empty());
  EXPECT_EQ(t.tensors.front().name, "v0/cg/affine0/biases");
  EXPECT_EQ(t.tensors[2].name, "v0/cg/resnet_v132/conv103/batchnorm103/beta");
  EXPECT_EQ(t.tensors.back().name, "v0/cg/conv0/conv2d/kernel");
  EXPECT_EQ(t.tensors.back().shape, (std::vector<std::int64_t>{7, 7, 3, 64}));
  EXPECT_EQ(t.layers.size(), 105u);
}

TEST(CnnModels, Vgg16FullyConnectedDominates) {
  const ModelTrace t = vgg16_trace();
  std::int64_t fc = 0;
  for (const auto& tensor : t.tensors) {
    if (tensor.layer.find("affine") != std::string::npos) fc += tensor.elements;
  }
  EXPECT_EQ(fc, 25088LL * 4096 + 4096 + 4096LL * 4096 + 4096 + 4096LL * 1001 + 1001);
  EXPECT_EQ(t.tensors[5].shape, (std::vector<std::int64_t>{25088, 4096}));
}

}  // namespace
}  // namespace hvd::workloads
