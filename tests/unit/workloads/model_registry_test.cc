// Registry: listing, lookup by name or file path, unknown names.
#include "hvd/workloads/model_registry.h"

#include <gtest/gtest.h>

namespace hvd::workloads {
namespace {

TEST(ModelRegistry, ListsBuiltinsWithSizes) {
  const std::vector<ModelInfo> models = list_models();
  ASSERT_EQ(models.size(), 9u);  // 4 CNNs, 2 transformers, 3 language models
  EXPECT_EQ(models[1].name, "resnet101");
  EXPECT_EQ(models[1].params, 44551209);
  EXPECT_EQ(models[1].tensors, 314u);
  for (const auto& m : models) EXPECT_FALSE(m.description.empty()) << m.name;
}

TEST(ModelRegistry, FindsBuiltinsAndFiles) {
  Result<ModelTrace> vgg = find_model("vgg16");
  ASSERT_TRUE(vgg.ok()) << vgg.error();
  EXPECT_EQ(vgg->tensor_count(), 32u);
  Result<ModelTrace> tiny = find_model(HVD_WORKLOADS_DIR "/examples/tiny_mlp.json");
  ASSERT_TRUE(tiny.ok()) << tiny.error();
  EXPECT_EQ(tiny->name, "tiny-mlp");
}

TEST(ModelRegistry, UnknownNameListsKnownModels) {
  Result<ModelTrace> r = find_model("resnet152");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "unknown model 'resnet152'; known models: resnet50, resnet101, vgg16, inception3, "
            "bert-large, gpt2-xl, llama3-8b, llama3-70b, gpt3-175b (or a path to a .json model trace)");
  Result<ModelTrace> missing = find_model("/nonexistent/model.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "/nonexistent/model.json: cannot open trace file");
}

}  // namespace
}  // namespace hvd::workloads
