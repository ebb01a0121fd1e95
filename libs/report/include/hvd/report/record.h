// The report record (docs/formats.md, "Report"): one run's figures and the published points
// a report compares with, and their JSON and CSV both ways. Plain C++ over nlohmann (no
// runtime): hvdbench and hvdsim write reports with it (hvd/report/report.h), hvdsim passes
// a run's outcome between processes with it, and hvdview reads reports with it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hvd::report {

/// Traffic of one collective kind in a run.
struct CollectiveRecord {
  std::string op;        ///< "allreduce", "allgather", ...
  int64_t calls = 0;     ///< operations
  int64_t bytes = 0;     ///< payload bytes (per rank)
  double time_s = 0;     ///< time spent executing them
  double algbw_gbps = 0; ///< bytes / time, GB/s
  double busbw_gbps = 0; ///< algbw × the nccl-tests factor
};

/// One run (one model at one np, or one sweep point).
struct RunRecord {
  std::string model;                        ///< model name
  int np = 0;                               ///< ranks
  int batch_size = 0;                       ///< per-rank batch
  std::string gpu;                          ///< GPU model
  std::string label;                        ///< sweep point, "" otherwise
  double images_per_sec = 0;                ///< whole job
  double images_per_sec_ci95 = 0;           ///< half-width of the 95 % interval
  double images_per_sec_single = 0;         ///< one rank alone
  double scaling_efficiency = 0;            ///< images_per_sec / (np × single)
  double step_time_s = 0;                   ///< mean step
  double compute_s = 0;                     ///< compute part
  double exposed_comm_s = 0;                ///< communication not hidden
  double negotiation_s = 0;                 ///< part of exposed spent negotiating
  int steps = 0;                            ///< measured steps
  std::map<std::string, std::string> knobs; ///< effective knobs worth showing
  std::vector<CollectiveRecord> collectives;///< per collective kind
  /// Sequence workloads that name their length, and the language models: tokens per
  /// sequence, images_per_sec x seq_len, and workload.sharding. seq_len 0: not written.
  int seq_len = 0;
  double tokens_per_sec = 0;
  std::string sharding;
  /// hvdsim --seeds K (K > 1): the figures above are means over K draws of the random
  /// parameters (GPU speeds), and these their range. K = 1: not written.
  int seeds = 1;
  double images_per_sec_lo = 0, images_per_sec_hi = 0;
  double scaling_efficiency_lo = 0, scaling_efficiency_hi = 0;
};

/// A published scaling efficiency to compare with (a scenario's "reference" entries).
struct Reference {
  std::string model;              ///< model name, as records name it
  int np = 0;                     ///< ranks
  double scaling_efficiency = 0;  ///< a fraction, as RunRecord::scaling_efficiency (0.9: 90 %)
  std::string source;             ///< where it was published
};

/// A whole report: `{"tool", "version", "source", "runs": [...], "reference": [...]}`.
struct ReportDocument {
  std::string tool;
  std::string version;
  std::string source;
  std::vector<RunRecord> runs;
  std::vector<Reference> reference;
};

/// The version the writers put in a report.
inline constexpr const char* kReportVersion = "0.1.0";

// ---- JSON ------------------------------------------------------------------------------

/// A record as the report writes it (the seeds fields only when seeds > 1).
nlohmann::json to_json(const RunRecord& r);
/// A published point as the report writes it.
nlohmann::json to_json(const Reference& p);
/// The whole report document; "reference" only when there are published points.
nlohmann::json to_json(const std::string& tool, const std::string& source, const std::vector<RunRecord>& runs,
                       const std::vector<Reference>& reference = {});

/// A report field that is missing or of the wrong kind: what() is one line naming its path
/// ("runs[2].np: expected an integer from 0 to 2147483647, got 1e+30").
struct RecordError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What of a record a reader wants: hvdview shows neither knobs nor collectives and
/// leaves them unread (kFigures); everything else reads the whole record (kAll).
enum class RecordParts { kFigures, kAll };

/// Reads one record at JSON path `path`: model, np and images_per_sec required, the rest
/// optional (0 / empty when absent or null). Throws RecordError.
RunRecord run_from_json(const nlohmann::json& j, const std::string& path, RecordParts parts = RecordParts::kAll);
/// Reads one published point (model, np, a finite scaling_efficiency; source optional).
/// Throws RecordError.
Reference reference_from_json(const nlohmann::json& j, const std::string& path);
/// Parses `text` as JSON; on failure nullopt and `error` set to one line ("invalid JSON at
/// byte 12: ...", or "invalid JSON: ..." for a number beyond double).
std::optional<nlohmann::json> parse_json_text(const std::string& text, std::string* error);
/// Parses a whole report document. On failure returns nullopt and sets `error` to one line
/// ("invalid JSON at byte 12: ...", "not a report: ...", "runs[0].model: missing").
std::optional<ReportDocument> document_from_json(const std::string& text, std::string* error,
                                                 RecordParts parts = RecordParts::kAll);

// ---- CSV -------------------------------------------------------------------------------

/// The CSV header, and the five columns hvdsim --seeds adds to it.
extern const char* const kCsvHeader;
extern const char* const kCsvSeedColumns;

/// The CSV of `runs` (header, one line per run; the seed columns when a record has seeds > 1).
std::string to_csv(const std::vector<RunRecord>& runs);
/// Parses a report CSV (the columns above; knobs and collectives are not in it). On failure
/// returns nullopt and sets `error` to one line naming the line and column. tool is "csv".
std::optional<ReportDocument> document_from_csv(const std::string& text, std::string* error);

}  // namespace hvd::report
