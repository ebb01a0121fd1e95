// Runs the hvdbench binary (HVDBENCH_PATH) as a user would, outside any outer mpirun, and
// captures its exit code, stdout and stderr. Shared by the bench command-line tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace hvd::bench::testing {

/// What one hvdbench run left behind.
struct Outcome {
  int code = -1;    ///< exit code (-1: killed by a signal)
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// The whole file (empty if missing).
inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs `hvdbench <args>`. Not under mpirun, whatever the test runner's environment says;
/// self-launched mpirun may run as root (CI). ctest runs tests in parallel processes: one
/// file pair per process and test.
inline Outcome run_hvdbench(const std::string& args) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string base = ::testing::TempDir() + "hvdbench_" + std::to_string(getpid()) + "_" +
                           (info ? info->name() : "x");
  const std::string cmd =
      "env -u OMPI_COMM_WORLD_SIZE -u PMIX_SIZE -u PMI_SIZE "
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
      std::string(HVDBENCH_PATH) + " " + args + " >" + base + ".out 2>" + base + ".err";
  Outcome o;
  const int status = std::system(cmd.c_str());
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(base + ".out");
  o.err = slurp(base + ".err");
  return o;
}

}  // namespace hvd::bench::testing
