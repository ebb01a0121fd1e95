// BenchWorld over MPI_COMM_WORLD, or one rank alone (and, built without MPI, always alone).
#include "bench_world.h"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <thread>

#include "options.h"
#ifdef HVD_HAVE_MPI
#include <mpi.h>

#include "hvd/mpi.h"
#endif

namespace hvd::bench {

#ifdef HVD_HAVE_MPI

bool BenchWorld::built_with_mpi() { return true; }

Status BenchWorld::start(bool with_mpi) {
  if (!with_mpi) return Status::OK();
  HVD_RETURN_IF_ERROR(init_mpi(nullptr, nullptr));
  mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return Status::OK();
}

void BenchWorld::finalize() const {
  if (mpi) finalize_mpi();
}

int BenchWorld::fail(const std::string& line) const {
  std::cerr << "hvdbench: " << line << "\n";
  if (mpi && size > 1) abort_mpi(kExitRuntimeFailure);  // never leave peers waiting
  finalize();
  return kExitRuntimeFailure;
}

void BenchWorld::barrier() const {
  if (mpi) MPI_Barrier(MPI_COMM_WORLD);
}

double BenchWorld::max_of(double v) const {
  if (mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

double BenchWorld::sum_of(double v) const {
  double sum = v;
  if (mpi) MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

int64_t BenchWorld::sum_of(int64_t v) const {
  if (mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

double BenchWorld::mean_of_valid(double v) const {
  double in[2] = {v >= 0 ? v : 0, v >= 0 ? 1.0 : 0.0}, out[2] = {in[0], in[1]};
  if (mpi) MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out[1] > 0 ? out[0] / out[1] : -1;
}

double BenchWorld::from_rank0(double v, bool idle) const {
  if (!mpi) return v;
  if (!idle) {
    MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return v;
  }
  MPI_Request req;
  MPI_Ibcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
  int done = 0;
  while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return v;
}

int BenchWorld::first_failing(bool ok) const {
  int mine[2] = {ok ? 1 : 0, rank}, first[2] = {mine[0], mine[1]};
  if (mpi) MPI_Allreduce(mine, first, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  return first[0] ? -1 : first[1];
}

#else  // one process alone

bool BenchWorld::built_with_mpi() { return false; }

Status BenchWorld::start(bool with_mpi) {
  return with_mpi ? Status::Precondition("hvdbench was built without MPI") : Status::OK();
}

void BenchWorld::finalize() const {}

int BenchWorld::fail(const std::string& line) const {
  std::cerr << "hvdbench: " << line << "\n";
  return kExitRuntimeFailure;
}

void BenchWorld::barrier() const {}
double BenchWorld::max_of(double v) const { return v; }
double BenchWorld::sum_of(double v) const { return v; }
int64_t BenchWorld::sum_of(int64_t v) const { return v; }
double BenchWorld::mean_of_valid(double v) const { return v >= 0 ? v : -1; }
double BenchWorld::from_rank0(double v, bool) const { return v; }
int BenchWorld::first_failing(bool ok) const { return ok ? -1 : 0; }

#endif

}  // namespace hvd::bench
