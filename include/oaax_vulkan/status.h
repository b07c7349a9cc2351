// Status and StatusOr<T>: the project's single error type.
//
// Every fallible function returns a Status (or StatusOr<T>) carrying a code
// and a human-readable message that says what failed and where (file, byte
// offset, tensor, Vulkan call). No exception crosses a library boundary; the
// OAAX C facade is the only place a Status becomes an int + message.
#ifndef OAAX_VULKAN_STATUS_H_
#define OAAX_VULKAN_STATUS_H_

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace oaaxvk {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // caller passed something malformed (bad tensor, bad path)
  kDataLoss,           // a file's bytes violate its format (corrupt / hostile input)
  kNotFound,           // a named thing does not exist
  kUnimplemented,      // well-formed but not supported (unsupported op, dtype)
  kResourceExhausted,  // a limit was hit (size limits, device memory)
  kFailedPrecondition, // call order or state is wrong (model already loaded)
  kUnavailable,        // a device or driver is missing / lost
  kDeadlineExceeded,   // a bounded wait ran out
  kInternal,           // a bug in this project
};

// Returns a stable lower-case name for `code` ("ok", "invalid argument", ...).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "ok".
  std::string ToString() const;
  // Returns a copy with "<context>: " prepended to the message (no-op when OK).
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// printf-style formatting into a std::string (for building messages).
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string StrFormat(const char* fmt, ...);

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value of type T or a non-OK Status. Accessing value() of an error
// is a programming error (checked with an assert-like abort in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("StatusOr constructed from OK status without a value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace oaaxvk

// Propagates a non-OK Status from `expr` to the caller.
#define OAAXVK_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::oaaxvk::Status oaaxvk_status_ = (expr);        \
    if (!oaaxvk_status_.ok()) return oaaxvk_status_; \
  } while (0)

#define OAAXVK_CONCAT_INNER_(a, b) a##b
#define OAAXVK_CONCAT_(a, b) OAAXVK_CONCAT_INNER_(a, b)
// `OAAXVK_ASSIGN_OR_RETURN(auto x, F());` assigns the value or returns the error.
#define OAAXVK_ASSIGN_OR_RETURN(lhs, expr) \
  OAAXVK_ASSIGN_OR_RETURN_IMPL_(OAAXVK_CONCAT_(oaaxvk_statusor_, __LINE__), lhs, expr)
#define OAAXVK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // OAAX_VULKAN_STATUS_H_
