// Result<T>: a value or an error message; how the workloads library reports bad input.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace hvd::workloads {

/// Exception thrown by Result::value() on a failed result (never thrown for valid input).
class TraceError : public std::runtime_error {
 public:
  /// Builds the error from its one-line message.
  explicit TraceError(const std::string& message) : std::runtime_error(message) {}
};

/// The error half of a Result: one line naming what is wrong.
struct Error {
  std::string message;  ///< e.g. "trace.json: tensors[3].elements: -5 is not a positive integer"
};

/// Either a T or an Error; check ok() before value().
template <typename T>
class [[nodiscard]] Result {
 public:
  /// A successful result holding `value`.
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// A failed result holding `error`.
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  /// True when a value is held.
  bool ok() const { return std::holds_alternative<T>(v_); }
  /// Same as ok().
  explicit operator bool() const { return ok(); }
  /// The value; throws TraceError with the message when this is an error.
  const T& value() const& {
    check();
    return std::get<T>(v_);
  }
  /// The value (mutable); throws TraceError when this is an error.
  T& value() & {
    check();
    return std::get<T>(v_);
  }
  /// The value, moved out; throws TraceError when this is an error.
  T&& value() && {
    check();
    return std::get<T>(std::move(v_));
  }
  /// The error message ("" when ok()).
  const std::string& error() const {
    static const std::string kNone;
    return ok() ? kNone : std::get<Error>(v_).message;
  }
  /// Member access to the value; throws TraceError when this is an error.
  const T* operator->() const { return &value(); }
  /// The value; throws TraceError when this is an error.
  const T& operator*() const { return value(); }

 private:
  void check() const {
    if (!ok()) throw TraceError(std::get<Error>(v_).message);
  }
  std::variant<T, Error> v_;
};

}  // namespace hvd::workloads
