#include "core/logging.h"

#include <iostream>

namespace hvd {

Logger::Logger(std::ostream* out, LogLevel level, int rank)
    : out_(out ? out : &std::cerr), level_(level), rank_(rank) {}

void Logger::log(LogLevel level, const std::string& message) const {
  static constexpr const char* kNames[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR"};
  std::ostringstream line;
  line << "[hvd rank " << rank_ << ' ' << kNames[static_cast<int>(level)] << "] " << message
       << '\n';
  *out_ << line.str() << std::flush;
}

}  // namespace hvd
