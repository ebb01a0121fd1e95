// Scenario JSON -> ScenarioPoint, with path-naming errors (internal).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// A scenario error at a JSON path.
struct ScenarioError : std::runtime_error {
  ScenarioError(const std::string& path, const std::string& what)
      : std::runtime_error(path.empty() ? what : path + ": " + what) {}
};

/// Short rendering of a JSON value for messages.
std::string show_json(const nlohmann::json& v);

/// Reads one resolved document (overrides and one sweep point applied) into `out`.
/// Throws ScenarioError.
void read_point(const nlohmann::json& doc, ScenarioPoint* out);

/// The calibration file version this loader reads (docs/formats.md, "Calibration").
inline constexpr int kCalibrationVersion = 1;

/// Merges the values of doc["calibration"] (a file relative to `scenario_source`'s folder)
/// into doc where the scenario gives none. Throws ScenarioError naming the file and path.
void apply_calibration(nlohmann::json& doc, const std::string& scenario_source);

/// The "what_if" entries: (name, {path: value}). Throws ScenarioError.
std::vector<std::pair<std::string, nlohmann::json>> what_if_points(const nlohmann::json& doc);

}  // namespace hvd::sim
