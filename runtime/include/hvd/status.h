// hvd::Status: the result of every public call (ok, or a message saying what went wrong).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace hvd {

/// Kinds of failure a caller may want to tell apart.
enum class StatusCode { kOk, kInvalidArgument, kMismatch, kPrecondition, kAborted, kTimeout, kInternal };

/// Outcome of an operation: ok, or a code and a human-readable message.
///
/// One pointer wide: an ok Status is a null pointer (nothing to build or free on the
/// success path), a failure points to its code and message. Every pending operation's
/// handle holds one, and a simulation holds a million handles at a time.
class [[nodiscard]] Status {
 public:
  /// A successful status.
  Status() = default;
  /// A failed status with the given code and message.
  Status(StatusCode code, std::string message) : rep_(new Rep{code, std::move(message)}) {}
  Status(const Status& o) : rep_(o.rep_ ? new Rep(*o.rep_) : nullptr) {}
  Status(Status&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    if (this != &o) {
      delete rep_;
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  ~Status() { delete rep_; }

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
  /// A transfer with world rank `peer` did not complete in time.
  static Status Timeout(std::string m, int peer) {
    Status s(StatusCode::kTimeout, std::move(m));
    s.rep_->peer = peer;
    return s;
  }
  /// A bug or an unexpected backend error.
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  /// True when the operation succeeded.
  bool ok() const { return code() == StatusCode::kOk; }
  /// The failure kind (kOk on success).
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  /// The message ("" on success).
  const std::string& message() const { return rep_ ? rep_->message : empty_message(); }
  /// A timed-out transfer: the world rank of the peer it waited for (-1: none known).
  int peer() const { return rep_ ? rep_->peer : -1; }
  /// "OK" or "<code>: <message>".
  std::string to_string() const;

 private:
  struct Rep {
    StatusCode code;
    std::string message;
    int peer = -1;
  };
  static const std::string& empty_message() {
    static const std::string empty;
    return empty;
  }
  Rep* rep_ = nullptr;
};

/// A value of type T, or the Status saying why there is none: what a function that used
/// to take an out-parameter next to its Status returns instead.
///
///   StatusOr<Gathered> all = cp.gather(mine);
///   if (!all.ok()) return all.status();
///   use(*all);
///
/// A StatusOr built from an ok Status (which carries no value) holds an Internal error
/// instead, so ok() always means a value is there. value() on an error is a bug: it
/// prints the status and aborts.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  /// A failed result (`s` should not be ok).
  StatusOr(Status s) : v_(std::move(s)) {  // NOLINT: implicit, so `return status;` works
    if (std::get<Status>(v_).ok())
      v_ = Status::Internal("StatusOr built from an ok Status without a value");
  }
  /// A successful result holding `value`.
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit, so `return value;` works

  /// True when a value is held.
  bool ok() const { return v_.index() == 1; }
  /// The failure, or Status::OK() when a value is held.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }
  /// The value (aborts when there is none).
  T& value() & { check(); return std::get<T>(v_); }
  const T& value() const& { check(); return std::get<T>(v_); }
  T&& value() && { check(); return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void check() const {
    if (ok()) return;
    std::fprintf(stderr, "hvd::StatusOr::value() on an error: %s\n",
                 std::get<Status>(v_).to_string().c_str());
    std::abort();
  }
  std::variant<Status, T> v_;
};

}  // namespace hvd

/// Evaluates `expr` (a Status) and returns it from the enclosing function when it failed.
#define HVD_RETURN_IF_ERROR(expr)                         \
  do {                                                    \
    ::hvd::Status hvd_status_ = (expr);                   \
    if (!hvd_status_.ok()) return hvd_status_;            \
  } while (0)

#define HVD_STATUS_CONCAT_INNER_(a, b) a##b
#define HVD_STATUS_CONCAT_(a, b) HVD_STATUS_CONCAT_INNER_(a, b)
/// `HVD_ASSIGN_OR_RETURN(lhs, expr)`: evaluates `expr` (a StatusOr); on failure returns its
/// status from the enclosing function, otherwise moves the value into `lhs` (which may be
/// a declaration: `HVD_ASSIGN_OR_RETURN(Gathered all, cp.gather(mine));`). It expands to
/// several statements: inside an `if`, use braces.
#define HVD_ASSIGN_OR_RETURN(lhs, expr) \
  HVD_ASSIGN_OR_RETURN_IMPL_(HVD_STATUS_CONCAT_(hvd_status_or_, __LINE__), lhs, expr)
#define HVD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
