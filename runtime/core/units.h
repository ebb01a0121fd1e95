// Parsing of numbers with units ("64MiB", "25Gbps", "5us"), shared by knobs and scenarios.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hvd {

/// "67108864", "64MiB", "64MB", "1.5GiB", "4K" → bytes (binary K/M/G = 1024 multiples).
std::optional<int64_t> parse_bytes(std::string_view s);
/// A size as nccl-tests' -b / -e take it: parse_bytes's, and a lowercase k, m, g or t too
/// (binary multiples: 8k = 8K = 8192).
std::optional<int64_t> parse_sweep_size(std::string_view s);
/// A plain number, or (when `ms` is true) a time with unit converted to milliseconds.
std::optional<double> parse_milliseconds_or_number(std::string_view s, bool ms);
/// "5us", "1.2ms", "0.5s", "100ns" → seconds.
std::optional<double> parse_seconds(std::string_view s);
/// "25Gbps", "12GBps", "100Mbps", "1.5TBps" → bytes per second.
std::optional<double> parse_bandwidth(std::string_view s);
/// "1/0/true/false/yes/no/on/off".
std::optional<bool> parse_bool(std::string_view s);
/// A plain floating-point number (whole string).
std::optional<double> parse_number(std::string_view s);

}  // namespace hvd
