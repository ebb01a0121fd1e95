// Formatting of microsecond durations and choice of ruler tick steps.
#pragma once

#include <string>

namespace hvdview {

// "850 ns", "12.5 us", "3.25 ms", "1.5 s" with `digits` significant decimals.
std::string FormatDuration(double us, int digits = 3);
// A 1-2-5 step (microseconds) so that ticks are at least `min_px` pixels apart.
double NiceTickStep(double us_per_px, double min_px);

}  // namespace hvdview
