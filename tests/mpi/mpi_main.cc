// GoogleTest main for tests run under mpirun: every rank runs every test, only rank 0
// prints, and the exit code says whether any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include "hvd/hvd.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  hvd::Status s = hvd::init();
  if (!s.ok()) {
    std::fprintf(stderr, "hvd::init failed: %s\n", s.to_string().c_str());
    return 1;
  }
  if (hvd::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any = failed;
  // Agree on the outcome before shutting the runtime down.
  hvd::Tensor t{&any, hvd::DataType::kInt32, {1}};
  (void)hvd::allreduce("test.outcome", t, t, hvd::ReduceOp::kMax);
  (void)hvd::shutdown();
  if (any && !failed) std::fprintf(stderr, "another rank failed\n");
  return any;
}
