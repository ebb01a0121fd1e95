// Helpers for hvdview tests: temporary files and fixture paths.
#pragma once

#include <string>

namespace hvdview::testing {

// Writes `content` to a fresh file in a per-process temporary folder; returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content);
// A path in the temporary folder (not created).
std::string TempPath(const std::string& name);
// Path of a fixture under tests/gui/data.
std::string DataFile(const std::string& name);

}  // namespace hvdview::testing
