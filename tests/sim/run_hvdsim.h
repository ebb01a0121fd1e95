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
