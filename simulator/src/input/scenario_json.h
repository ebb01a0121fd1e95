// Scenario JSON -> ScenarioPoint, with path-naming errors (internal).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// `s` itself when at most `n` bytes long, else its first n - 3 bytes and "...": user text
/// (keys, paths, values) goes through this before it enters a message.
std::string cut(const std::string& s, size_t n = 60);

/// A scenario error at a JSON path (cut: a path is made of the document's keys).
struct ScenarioError : std::runtime_error {
  ScenarioError(const std::string& path, const std::string& what)
      : std::runtime_error(path.empty() ? what : cut(path, 120) + ": " + what) {}
};

/// Short rendering of a JSON value for messages: at most 60 characters, and it looks at no
/// more of the value than it shows (a huge or deeply nested value costs nothing).
std::string show_json(const nlohmann::json& v);

/// The largest scenario or calibration file the loader reads (bytes).
inline constexpr uintmax_t kMaxInputFileBytes = 16u << 20;

/// Reads the whole input file `path` into `text`: "" when done, else what is wrong with it
/// for a message ("does not exist", "is a directory, not a file", ...).
std::string read_input_file(const std::string& path, std::string* text);

/// Checks a SimGrid platform XML file before SimGrid reads it (scenario_platform.cc): ""
/// when fine, else what is wrong ("does not exist", "line 7: <link bandwidth="-1Gbps"> is
/// not a bandwidth > 0", ...).
std::string check_platform_xml(const std::string& path);

/// The deepest nesting of arrays and objects a scenario, a calibration file or a --set value
/// may have (docs/formats.md, "Scenario").
inline constexpr size_t kMaxJsonDepth = 64;

/// Parses JSON text strictly: not deeper than kMaxJsonDepth, no key twice in one object.
/// Both are checked while parsing, before anything copies or prints the document. Throws
/// ScenarioError naming the path ("not valid JSON: ..." for syntax errors).
/// The one strict parse of the simulator's inputs (scenario, --set values, calibration),
/// hvd::strict_json::parse (libs/json) worded as scenario errors.
nlohmann::json parse_json_strict(const std::string& text);

/// The largest cluster.gpu_speed_seed, and the most draws of simulation.seeds / --seeds.
inline constexpr int kMaxSeed = 1000000000;
inline constexpr int kMaxSeeds = 1000;

/// The scenario's "reference" array (published efficiencies), models named as the report's
/// records name them. Throws ScenarioError naming the entry ("reference[2].np: ...").
/// `named`: the models are already the records' names (a shard's copy, for --merge: a
/// trace file's model is named by its content, not found again by that name).
std::vector<report::Reference> read_reference(const nlohmann::json& v, bool named = false);

/// Reads one resolved document (overrides and one sweep point applied) into `out`.
/// Throws ScenarioError.
void read_point(const nlohmann::json& doc, ScenarioPoint* out);

/// The calibration file version this loader reads (docs/formats.md, "Calibration").
inline constexpr int kCalibrationVersion = 1;

/// Merges the values of doc["calibration"] (a file relative to `scenario_source`'s folder)
/// into doc where the scenario gives none. Throws ScenarioError naming the file and path.
void apply_calibration(nlohmann::json& doc, const std::string& scenario_source);

/// Reads runtime.`key` into o->nccl (and o->knobs) when it is runtime.gpu_operations or one
/// of NCCL's variables (nccl_algo, nccl_proto, nccl_min_nchannels, nccl_max_nchannels; `text`
/// is the value as a knob string): true; false for any other key. Throws ScenarioError
/// (nccl_settings.cc).
bool read_nccl_knob(const std::string& key, const nlohmann::json& v, const std::string& text, ScenarioPoint* o);

/// The "what_if" entries: (name, {path: value}). Throws ScenarioError.
std::vector<std::pair<std::string, nlohmann::json>> what_if_points(const nlohmann::json& doc);

}  // namespace hvd::sim
