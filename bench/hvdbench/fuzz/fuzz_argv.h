// A fuzz input as a command line: arguments separated by NUL bytes, after `prog`; at most
// 64 arguments (longer inputs are skipped: an empty result). Shared by the CLI fuzzers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hvd::bench {

inline std::vector<std::string> fuzz_argv(const char* prog, const uint8_t* data, size_t size) {
  std::vector<std::string> args = {prog};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return {};
  return args;
}

}  // namespace hvd::bench
