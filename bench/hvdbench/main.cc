// hvdbench: tf_cnn_benchmarks + horovodrun + nccl-tests in one command (see --help).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "calibrate_mode.h"
#include "collective_mode.h"
#include "gpu_world.h"
#include "hvd/report/report.h"
#include "hvd/workloads/model_registry.h"
#include "hvd/workloads/step_plan.h"
#include "launcher.h"
#include "model_mode.h"
#include "options.h"

namespace hb = hvd::bench;
namespace wl = hvd::workloads;

namespace {

int list_models() {
  std::printf("%-12s %10s %8s  %s\n", "model", "params", "tensors", "description");
  for (const auto& m : wl::list_models())
    std::printf("%-12s %9.1fM %8zu  %s\n", m.name.c_str(), static_cast<double>(m.params) / 1e6,
                m.tensors, m.description.c_str());
  std::printf("\n--model also accepts a path to a .json model trace "
              "(libs/workloads/trace.schema.json).\n");
  return hb::kExitOk;
}

// Checks what can be checked before any rank starts, so bad input fails once, fast.
int validate_before_launch(const hb::Options& o) {
  if (!o.model.empty()) {
    wl::Result<wl::ModelTrace> t = wl::find_model(o.model, o.seq_len);
    if (!t) {
      std::cerr << "hvdbench: " << t.error() << "\n";
      return hb::kExitBadInput;
    }
    wl::Result<wl::StepPlan> p = hb::plan_for(*t, o);
    if (!p) {
      std::cerr << "hvdbench: " << p.error() << "\n";
      return hb::kExitBadInput;
    }
  }
  if (!o.hostfile.empty() && !std::ifstream(o.hostfile)) {
    std::cerr << "hvdbench: --hostfile: cannot read '" << o.hostfile << "'\n";
    return hb::kExitBadInput;
  }
  auto tl = o.knob_env.find("HVD_TIMELINE");
  if (tl != o.knob_env.end() && !std::ofstream(tl->second, std::ios::app)) {
    std::cerr << "hvdbench: --timeline-filename: cannot write '" << tl->second << "'\n";
    return hb::kExitBadInput;
  }
  if (!o.calibrate.empty() && !std::ofstream(o.calibrate, std::ios::app)) {
    std::cerr << "hvdbench: --calibrate: cannot write '" << o.calibrate << "'\n";
    return hb::kExitBadInput;
  }
  if (!o.report.empty()) {
    std::error_code ec;
    const bool trace_file = std::filesystem::is_regular_file(o.model, ec);
    if (const std::string why = hvd::report::report_path_problem(o.report, {{"model trace", trace_file ? o.model : ""}});
        !why.empty()) {
      std::cerr << "hvdbench: --report: " << why << "\n";
      return hb::kExitBadInput;
    }
  }
  return hb::kExitOk;
}

// --device gpu: fail once, before any rank starts, when this build has no NCCL backend
// (exit 2) or when every rank would run on this machine and it has no usable GPU (exit 1).
// Ranks on other hosts (-H, --hostfile, an outer mpirun) check for themselves: the NCCL
// backend makes every rank fail with the same reason, printed once by rank 0.
int check_device_before_launch(const hb::Options& o, hb::LaunchMode mode) {
  if (o.device != "gpu") return hb::kExitOk;
  // All ranks here: in-process, a singleton MPI job (collective mode at -np 1), or our
  // own mpirun on localhost.
  const bool all_local = o.hosts.empty() && o.hostfile.empty() &&
                         (mode != hb::LaunchMode::kMpiWorld || hb::mpi_world_size_from_env() == 0);
  hb::GpuVerdict v = hb::check_gpu_here();
  if (v.exit_code == hb::kExitOk || (v.exit_code == hb::kExitRuntimeFailure && !all_local))
    return hb::kExitOk;
  std::cerr << "hvdbench: " << v.reason << "\n";
  return v.exit_code;
}

int run(int argc, char** argv) {
  hb::Options o;
  hb::ParseResult pr = hb::parse_options(argc, argv, &o);
  if (pr.exit_code == hb::kExitOk) {
    std::cout << pr.message;
    return hb::kExitOk;
  }
  if (pr.exit_code > 0) {
    std::cerr << "hvdbench: " << pr.message << "\n";
    return pr.exit_code;
  }
  if (o.list_models) return list_models();
  const hb::LaunchMode mode = hb::decide_launch(o);
  const bool launched_by_us = std::getenv(hb::kLaunchedMarker) != nullptr;
  if (!launched_by_us) {
    int code = validate_before_launch(o);
    if (code != hb::kExitOk) return code;
    code = check_device_before_launch(o, mode);
    if (code != hb::kExitOk) return code;
    hb::export_knob_env(o);
  }
  if (mode == hb::LaunchMode::kSelfLaunch) {
#ifndef HVD_HAVE_MPI
    std::cerr << "hvdbench: -np " << o.np << " needs MPI; this hvdbench was built without it\n";
    return hb::kExitBadInput;
#else
    if (std::string hosts = hb::check_hosts(o); !hosts.empty()) {
      std::cerr << "hvdbench: " << hosts << "\n";
      return hb::kExitBadInput;
    }
    return hb::exec_mpirun(o, argc, argv);
#endif
  }
  if (mode == hb::LaunchMode::kMpiWorld && !launched_by_us && o.np_given &&
      o.np != hb::mpi_world_size_from_env() && hb::mpi_world_size_from_env() > 0 &&
      std::getenv("OMPI_COMM_WORLD_RANK") && std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")) == 0)
    std::cerr << "hvdbench: note: ignoring -np " << o.np << ": running on the mpirun world of "
              << hb::mpi_world_size_from_env() << " ranks\n";
  if (!o.calibrate.empty()) return hb::run_calibrate_mode(o, mode == hb::LaunchMode::kMpiWorld);
  if (!o.collective.empty()) return hb::run_collective_mode(o);
  return hb::run_model_mode(o, mode == hb::LaunchMode::kMpiWorld);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "hvdbench: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "hvdbench: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "hvdbench: unexpected failure\n";
  }
  return hb::kExitRuntimeFailure;
}
