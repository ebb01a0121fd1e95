// One rank kills itself (SIGKILL) in the middle of training-like allreduces. The others
// must not hang: either the stall shutdown deadline fails their operations (exit 3) or
// mpirun tears the job down. Every rank's timeline must still parse.
#include <csignal>
#include <cstdio>
#include <vector>

#include "hvd/hvd.h"

int main() {
  if (!hvd::init().ok()) return 1;
  const int victim = hvd::size() - 1;
  for (int step = 0; step < 1000; ++step) {
    if (step == 5 && hvd::rank() == victim) std::raise(SIGKILL);
    std::vector<float> v(1 << 16, 1.0f);
    hvd::Tensor t{v.data(), hvd::DataType::kFloat32, {1 << 16}};
    hvd::Status s = hvd::allreduce("step", t, t);
    if (!s.ok()) {
      std::fprintf(stderr, "rank %d: step %d failed as expected: %s\n", hvd::rank(), step,
                   s.to_string().c_str());
      std::fflush(stderr);
      std::_Exit(3);  // MPI cannot be finalized with a dead peer
    }
  }
  (void)hvd::shutdown();
  return 0;
}
