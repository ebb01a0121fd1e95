#include "core/time_format.h"

#include <cmath>
#include <cstdio>

namespace hvdview {

std::string FormatDuration(double us, int digits) {
  const double magnitude = std::fabs(us);
  const char* unit = "us";
  double value = us;
  if (magnitude >= 1e6) {
    value = us / 1e6;
    unit = "s";
  } else if (magnitude >= 1e3) {
    value = us / 1e3;
    unit = "ms";
  } else if (magnitude < 1 && magnitude > 0) {
    value = us * 1e3;
    unit = "ns";
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.*g %s", digits + 1, value, unit);
  return text;
}

double NiceTickStep(double us_per_px, double min_px) {
  const double raw = us_per_px * min_px;
  if (!(raw > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

}  // namespace hvdview
