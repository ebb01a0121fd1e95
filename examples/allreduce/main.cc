#include <hvd/hvd.h>
#include <cstdio>
#include <vector>

int main() {
  if (!hvd::init().ok()) return 1;
  std::vector<float> grad(4, float(hvd::rank() + 1));
  hvd::Tensor t{grad.data(), hvd::DataType::kFloat32, {4}};
  hvd::Status s = hvd::allreduce("grad", t, t, hvd::ReduceOp::kAverage);
  std::printf("rank %d of %d: %s, average = %g\n", hvd::rank(), hvd::size(), s.to_string().c_str(), grad[0]);
  return hvd::shutdown().ok() && s.ok() ? 0 : 1;
}
