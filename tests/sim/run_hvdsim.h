// Test helper: runs the built hvdsim (HVDSIM_EXE) with `args`; its stderr goes to `err`,
// stdout is dropped. Returns the exit code (-1 when it did not exit normally).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

inline int run_hvdsim(const std::string& args, std::string* err) {
  const std::string cmd = std::string(HVDSIM_EXE) + " " + args + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  err->clear();
  while (fgets(buf, sizeof buf, p)) *err += buf;
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/// run_hvdsim with stdout kept in `out` (stderr in `err`).
#include <unistd.h>

#include <fstream>
#include <sstream>

inline int run_hvdsim(const std::string& args, std::string* err, std::string* out) {
  const std::string file = "/tmp/hvdsim_err_" + std::to_string(::getpid());
  const std::string cmd = std::string(HVDSIM_EXE) + " " + args + " 2>" + file;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  out->clear();
  while (fgets(buf, sizeof buf, p)) *out += buf;
  const int st = pclose(p);
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  *err = ss.str();
  std::remove(file.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
