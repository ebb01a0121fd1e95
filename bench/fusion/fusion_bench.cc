// hvd_fusion_bench: ResNet-101's 314 gradient tensors submitted asynchronously as one
// step, against one allreduce of the same 178 MB, with fusion at 128 MiB, 64 MiB and off.
// Run under mpirun (-np 2, -np 4). Prints effective bandwidth (nccl-tests busbw).
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "hvd/mpi.h"
#include "hvd/report/report.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"
#include "hvd/workloads/model_registry.h"

namespace {

struct Sample {
  double one_s = 0, many_s = 0;
};

double time_step(hvd::Runtime& rt, std::vector<std::vector<float>>& bufs,
                 const std::vector<std::string>& names) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  std::vector<hvd::Handle> hs;
  for (size_t i = 0; i < bufs.size(); ++i) {
    hvd::Tensor t{bufs[i].data(), hvd::DataType::kFloat32, {static_cast<int64_t>(bufs[i].size())}};
    hs.push_back(rt.allreduce_async(names[i], t, t, hvd::ReduceOp::kSum));
  }
  for (auto& h : hs)
    if (!h->wait().ok()) std::abort();
  return MPI_Wtime() - t0;
}

Sample measure(const hvd::Seams& seams, int64_t threshold, const std::vector<int64_t>& sizes,
               int reps) {
  hvd::Config cfg;
  cfg.fusion_threshold = threshold;
  std::unique_ptr<hvd::Runtime> rt;
  if (!hvd::start_runtime(hvd::RuntimeOptions{seams, cfg}, &rt).ok()) std::abort();
  std::vector<std::vector<float>> many, one(1);
  std::vector<std::string> names, one_name = {"all"};
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    many.emplace_back(static_cast<size_t>(sizes[i]), 1.0f);
    names.push_back(std::string("t").append(std::to_string(i)));
    total += sizes[i];
  }
  one[0].assign(static_cast<size_t>(total), 1.0f);
  Sample best{1e30, 1e30};
  for (int r = 0; r < reps + 1; ++r) {  // first repetition warms up
    double a = time_step(*rt, one, one_name), b = time_step(*rt, many, names);
    if (r == 0) continue;
    best.one_s = std::min(best.one_s, a);
    best.many_s = std::min(best.many_s, b);
  }
  (void)rt->shutdown();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (!hvd::init_mpi(&argc, &argv).ok()) return 1;
  hvd::OwnedSeams seams = hvd::host_seams(hvd::make_mpi_world_transport());
  hvd::Transport* world = seams.transport.get();
  auto model = hvd::workloads::find_model("resnet101");
  if (!model.ok()) return 2;
  std::vector<int64_t> sizes;
  int64_t bytes = 0;
  for (const auto& t : model.value().tensors) {
    sizes.push_back(t.elements);
    bytes += t.elements * 4;
  }
  const int n = world->size();
  const double f = hvd::report::busbw_factor("allreduce", n);
  if (world->rank() == 0)
    std::printf("# ResNet-101: %zu tensors, %.1f MB, np=%d; busbw GB/s (best of 5)\n"
                "%-14s %14s %18s %10s\n", sizes.size(), bytes / 1e6, n, "fusion", "one allreduce",
                "314 async tensors", "ratio");
  for (int64_t threshold : {int64_t{128} << 20, int64_t{64} << 20, int64_t{0}}) {
    Sample s = measure(seams.view(), threshold, sizes, 5);
    if (world->rank() == 0) {
      const double one = bytes / s.one_s / 1e9 * f, many = bytes / s.many_s / 1e9 * f;
      std::printf("%-14s %14.2f %18.2f %9.0f%%\n",
                  threshold ? (std::to_string(threshold >> 20) + "MiB").c_str() : "off", one, many,
                  100.0 * many / one);
    }
  }
  seams = hvd::OwnedSeams{};  // the MPI transport goes before MPI does
  hvd::finalize_mpi();
  return 0;
}
