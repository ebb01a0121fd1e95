// Scenario JSON -> ScenarioPoint, with path-naming errors (internal).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

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

}  // namespace hvd::sim
