// hvd::Status: the result of every public call (ok, or a message saying what went wrong).
#pragma once

#include <string>
#include <utility>

namespace hvd {

/// Kinds of failure a caller may want to tell apart.
enum class StatusCode { kOk, kInvalidArgument, kMismatch, kPrecondition, kAborted, kTimeout, kInternal };

/// Outcome of an operation: ok, or a code and a human-readable message.
class [[nodiscard]] Status {
 public:
  /// A successful status.
  Status() = default;
  /// A failed status with the given code and message.
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  /// The successful status.
  static Status OK() { return {}; }
  /// Bad argument supplied by the caller on this rank.
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  /// Ranks disagreed about a tensor (shape, dtype, op, root, ...).
  static Status Mismatch(std::string m) { return {StatusCode::kMismatch, std::move(m)}; }
  /// The runtime is not in a state that allows the call (e.g. not initialized).
  static Status Precondition(std::string m) { return {StatusCode::kPrecondition, std::move(m)}; }
  /// The runtime shut down or failed while the operation was pending.
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  /// A deadline passed (stall shutdown, dead peer).
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  /// A bug or an unexpected backend error.
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  /// True when the operation succeeded.
  bool ok() const { return code_ == StatusCode::kOk; }
  /// The failure kind (kOk on success).
  StatusCode code() const { return code_; }
  /// The message ("" on success).
  const std::string& message() const { return message_; }
  /// "OK" or "<code>: <message>".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace hvd
