// Inception v3 as tf_cnn_benchmarks builds it (models/inception_model.py, Inceptionv3Model
// with auxiliary=False): 299x299 input, every conv followed by batch norm with beta only.
#include <string>
#include <vector>

#include "cnn_builder.h"
#include "hvd/workloads/cnn_models.h"

namespace hvd::workloads {
namespace {

using detail::CnnBuilder;
using detail::FeatureMap;
using detail::Padding;

// One op of an inception column, as in ConvNetBuilder.inception_module's `cols` spec.
struct Op {
  enum Kind { kConv, kPool, kShare };
  Kind kind = kConv;
  int cout = 0;  // conv only
  int kh = 1, kw = 1, stride = 1;
  Padding pad = Padding::kSame;
};

Op conv(int cout, int kh, int kw, int stride = 1, Padding pad = Padding::kSame) {
  return Op{Op::kConv, cout, kh, kw, stride, pad};
}
Op pool(int k, int stride, Padding pad) {
  return Op{Op::kPool, 0, k, k, stride, pad};
}
Op share() {
  Op op;
  op.kind = Op::kShare;
  return op;
}

using Column = std::vector<Op>;

// ConvNetBuilder.inception_module: every column starts from the module input; a "share" op
// reuses the output of the op at the same position in the previous column. The module output
// concatenates the columns' last outputs along channels.
void inception_module(CnnBuilder& cnn, const std::string& prefix, const std::vector<Column>& cols) {
  const FeatureMap input = cnn.top();
  cnn.begin_scope(prefix);
  std::vector<FeatureMap> prev_outputs;
  FeatureMap out{0, 0, 0};
  for (const Column& col : cols) {
    std::vector<FeatureMap> outputs;
    cnn.set_top(input);
    for (std::size_t i = 0; i < col.size(); ++i) {
      const Op& op = col[i];
      if (op.kind == Op::kShare) {
        cnn.set_top(prev_outputs.at(i));
      } else if (op.kind == Op::kConv) {
        cnn.conv(op.cout, op.kh, op.kw, op.stride, op.stride, op.pad);
      } else {
        cnn.pool(op.kh, op.kw, op.stride, op.stride, op.pad);
      }
      outputs.push_back(cnn.top());
    }
    out = FeatureMap{cnn.top().h, cnn.top().w, out.c + cnn.top().c};
    prev_outputs = std::move(outputs);
  }
  cnn.end_scope();
  cnn.set_top(out);
}

void inception_v3_a(CnnBuilder& cnn, int n) {
  inception_module(cnn, "incept_v3_a",
                   {{conv(64, 1, 1)},
                    {conv(48, 1, 1), conv(64, 5, 5)},
                    {conv(64, 1, 1), conv(96, 3, 3), conv(96, 3, 3)},
                    {pool(3, 1, Padding::kSame), conv(n, 1, 1)}});
}

void inception_v3_b(CnnBuilder& cnn) {
  inception_module(cnn, "incept_v3_b",
                   {{conv(384, 3, 3, 2, Padding::kValid)},
                    {conv(64, 1, 1), conv(96, 3, 3), conv(96, 3, 3, 2, Padding::kValid)},
                    {pool(3, 2, Padding::kValid)}});
}

// Factorised 7x7: ('conv', n, 1, 7) is kernel height 1, width 7.
void inception_v3_c(CnnBuilder& cnn, int n) {
  inception_module(cnn, "incept_v3_c",
                   {{conv(192, 1, 1)},
                    {conv(n, 1, 1), conv(n, 1, 7), conv(192, 7, 1)},
                    {conv(n, 1, 1), conv(n, 7, 1), conv(n, 1, 7), conv(n, 7, 1), conv(192, 1, 7)},
                    {pool(3, 1, Padding::kSame), conv(192, 1, 1)}});
}

void inception_v3_d(CnnBuilder& cnn) {
  inception_module(
      cnn, "incept_v3_d",
      {{conv(192, 1, 1), conv(320, 3, 3, 2, Padding::kValid)},
       {conv(192, 1, 1), conv(192, 1, 7), conv(192, 7, 1), conv(192, 3, 3, 2, Padding::kValid)},
       {pool(3, 2, Padding::kValid)}});
}

void inception_v3_e(CnnBuilder& cnn) {
  inception_module(cnn, "incept_v3_e",
                   {{conv(320, 1, 1)},
                    {conv(384, 1, 1), conv(384, 1, 3)},
                    {share(), conv(384, 3, 1)},
                    {conv(448, 1, 1), conv(384, 3, 3), conv(384, 1, 3)},
                    {share(), share(), conv(384, 3, 1)},
                    {pool(3, 1, Padding::kSame), conv(192, 1, 1)}});
}

}  // namespace

ModelTrace inception3_trace(const CnnOptions& options) {
  CnnBuilder cnn(299, 3, detail::Norm::kBeta);
  cnn.conv(32, 3, 3, 2, 2, Padding::kValid);
  cnn.conv(32, 3, 3, 1, 1, Padding::kValid);
  cnn.conv(64, 3, 3, 1, 1, Padding::kSame);
  cnn.pool(3, 3, 2, 2, Padding::kValid);
  cnn.conv(80, 1, 1, 1, 1, Padding::kValid);
  cnn.conv(192, 3, 3, 1, 1, Padding::kValid);
  cnn.pool(3, 3, 2, 2, Padding::kValid);
  for (int n : {32, 64, 64}) inception_v3_a(cnn, n);
  inception_v3_b(cnn);
  for (int n : {128, 160, 160, 192}) inception_v3_c(cnn, n);
  inception_v3_d(cnn);
  inception_v3_e(cnn);  // average-pool branch
  inception_v3_e(cnn);  // max-pool branch (same shapes)
  cnn.pool(8, 8, 1, 1, Padding::kValid);
  cnn.affine(options.num_classes);
  ModelTrace t = std::move(cnn).finish(
      "inception3", options, 142.0,
      "TensorFlow performance benchmarks page (tensorflow/docs_src/performance/benchmarks.md, "
      "May 2017): DGX-1 P100 SXM2, tf_cnn_benchmarks, synthetic data, batch 64: 142 images/s");
  t.description = "Inception v3 (tf_cnn_benchmarks), 299x299, no aux head, 1001 classes";
  return t;
}

}  // namespace hvd::workloads
