#include "core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace hvd {
namespace {

// Splits "12.5GiB" into 12.5 and "GiB"; false when no number leads.
bool split_number(std::string_view s, double* num, std::string_view* unit) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return false;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, *num);
  if (ec != std::errc() || ptr == begin || !std::isfinite(*num)) return false;
  std::string_view rest(ptr, static_cast<size_t>(end - ptr));
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  *unit = rest;
  return true;
}

}  // namespace

std::optional<double> parse_number(std::string_view s) {
  double v;
  std::string_view unit;
  if (!split_number(s, &v, &unit) || !unit.empty()) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_bytes(std::string_view s) {
  double v;
  std::string_view u;
  if (!split_number(s, &v, &u) || v < 0) return std::nullopt;
  struct Unit { std::string_view name; double factor; };
  static constexpr Unit kUnits[] = {
      {"", 1}, {"B", 1}, {"K", 1024.0}, {"KB", 1e3}, {"KiB", 1024.0}, {"M", 1048576.0},
      {"MB", 1e6}, {"MiB", 1048576.0}, {"G", 1073741824.0}, {"GB", 1e9},
      {"GiB", 1073741824.0}, {"T", 1099511627776.0}, {"TB", 1e12}, {"TiB", 1099511627776.0}};
  for (const Unit& unit : kUnits) {
    if (unit.name == u) {
      double b = v * unit.factor;
      if (b > 9.0e18 || b != std::floor(b)) return std::nullopt;
      return static_cast<int64_t>(b);
    }
  }
  return std::nullopt;
}

std::optional<int64_t> parse_sweep_size(std::string_view s) {
  std::string t(s);
  if (!t.empty() && std::string_view("kmgt").find(t.back()) != std::string_view::npos)
    t.back() = static_cast<char>(t.back() - 'a' + 'A');
  return parse_bytes(t);
}

std::optional<double> parse_seconds(std::string_view s) {
  double v;
  std::string_view u;
  if (!split_number(s, &v, &u) || v < 0) return std::nullopt;
  if (u == "s") return v;
  if (u == "ms") return v * 1e-3;
  if (u == "us") return v * 1e-6;
  if (u == "ns") return v * 1e-9;
  return std::nullopt;
}

std::optional<double> parse_milliseconds_or_number(std::string_view s, bool ms) {
  if (auto n = parse_number(s)) return n;
  if (!ms) return std::nullopt;
  if (auto sec = parse_seconds(s)) return *sec * 1e3;
  return std::nullopt;
}

std::optional<double> parse_bandwidth(std::string_view s) {
  double v;
  std::string_view u;
  if (!split_number(s, &v, &u) || v < 0) return std::nullopt;
  struct Unit { std::string_view name; double factor; };
  static constexpr Unit kUnits[] = {
      {"bps", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
      {"Tbps", 1e12 / 8}, {"Bps", 1}, {"KBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9},
      {"TBps", 1e12}, {"KiBps", 1024.0}, {"MiBps", 1048576.0}, {"GiBps", 1073741824.0}};
  for (const Unit& unit : kUnits)
    if (unit.name == u) return v * unit.factor;
  return std::nullopt;
}

std::optional<bool> parse_bool(std::string_view s) {
  std::string l(s);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
  if (l == "0" || l == "false" || l == "no" || l == "off" || l.empty()) return false;
  return std::nullopt;
}

}  // namespace hvd
