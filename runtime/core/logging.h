// A per-runtime logger: "[hvd 12:00:00.123 rank 3 WARNING] message". No global state.
#pragma once

#include <ostream>
#include <sstream>
#include <string>

#include "hvd/config.h"
#include "hvd/platform.h"

namespace hvd {

/// Writes leveled log lines for one rank.
class Logger {
 public:
  /// Logs to `out` (std::cerr if null) at `level` and above.
  Logger(std::ostream* out, LogLevel level, int rank);
  /// True when messages at `level` are written.
  bool enabled(LogLevel level) const { return level >= level_; }
  /// Writes one line.
  void log(LogLevel level, const std::string& message) const;
  /// The configured level.
  LogLevel level() const { return level_; }

 private:
  std::ostream* out_;
  LogLevel level_;
  int rank_;
};

}  // namespace hvd

#define HVD_LOG(logger, lvl, expr)                      \
  do {                                                  \
    if ((logger).enabled(::hvd::LogLevel::lvl)) {       \
      std::ostringstream hvd_log_os_;                   \
      hvd_log_os_ << expr;                              \
      (logger).log(::hvd::LogLevel::lvl, hvd_log_os_.str()); \
    }                                                   \
  } while (0)
