// SPDX-License-Identifier: Apache-2.0
// Status and StatusOr: the error model of every fallible call in k8s-agent.

#ifndef K8S_AGENT_PLUGIN_BASE_STATUS_H_
#define K8S_AGENT_PLUGIN_BASE_STATUS_H_

#include <chrono>
#include <string>
#include <utility>
#include <variant>

namespace k8s_agent {

/// Canonical error codes. A code says what the caller should do next;
/// the message says why, for a human.
enum class Code {
  kOk = 0,
  kInvalidArgument,     ///< Bad input from the user: fix the command line.
  kNotFound,            ///< The object does not exist (yet).
  kUnauthenticated,     ///< Credentials missing or stale (HTTP 401).
  kPermissionDenied,    ///< Credentials valid but not allowed (403, auth).
  kExpired,             ///< resourceVersion too old (HTTP 410): relist.
  kUnavailable,         ///< Transient: retry with backoff.
  kDeadlineExceeded,    ///< One of our own timers expired.
  kFailedPrecondition,  ///< The world is in a state that will not heal.
  kResourceExhausted,   ///< Throttled (HTTP 429): come back later.
  kTooLarge,            ///< A size limit hit: asking again gets the same.
  kCancelled,           ///< Stopped on request (signal).
  kInternal,            ///< A bug or a malformed answer.
};

/// Returns the code's name, e.g. "Unavailable".
const char* CodeName(Code code);

/// The result of an operation that returns no value. Cheap when ok.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  /// "Unavailable: connect 10.0.0.1:22: Connection refused".
  std::string ToString() const;

  /// Returns a copy whose message is "context: message". Used by each
  /// layer that knows something the lower layer did not.
  Status WithContext(const std::string& context) const;

  /// When the server said to come back (Retry-After, a Status object's
  /// retryAfterSeconds); zero when it did not. Travels with the error so
  /// the one retry policy reads it where it decides.
  std::chrono::milliseconds retry_after() const { return retry_after_; }
  Status WithRetryAfter(std::chrono::milliseconds delay) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::chrono::milliseconds retry_after_{0};
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status UnauthenticatedError(std::string message);
Status PermissionDeniedError(std::string message);
Status ExpiredError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status FailedPreconditionError(std::string message);
Status ResourceExhaustedError(std::string message);
Status TooLargeError(std::string message);
Status CancelledError(std::string message);
Status InternalError(std::string message);

/// Builds a Status from errno, e.g. ErrnoError("connect", ECONNREFUSED).
/// Refused, reset, unreachable and timeouts map to kUnavailable.
Status ErrnoError(const std::string& what, int err);

/// What an error's code says about trying again: the one classifier behind
/// every retry loop. kube::ApiRetryPolicy turns each class into an action
/// for API calls (relist, token reload, the short 403 window); the SSH
/// probe retries kBackoff and fails on anything else (for SSH a denial is
/// an auth rejection, and there is no list or token to renew).
enum class RetryClass {
  kNone,             ///< kOk: nothing to retry.
  kBackoff,          ///< Transient (refused, reset, 5xx, 429): back off.
  kRelist,           ///< The resourceVersion left the history: list again.
  kReauthenticate,   ///< Credentials stale: reload them, then once more.
  kMaybeCatchingUp,  ///< Denied: may be a cache (RBAC) still catching up.
  kFail,             ///< Repeating gets the same answer.
};

RetryClass ClassifyForRetry(Code code);

/// A value or the Status explaining its absence.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : v_(status) {}  // NOLINT: implicit by design
  StatusOr(Status&& status) : v_(std::move(status)) {}  // NOLINT
  StatusOr(const T& value) : v_(value) {}               // NOLINT
  StatusOr(T&& value) : v_(std::move(value)) {}         // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace k8s_agent

#define K8S_STATUS_CONCAT_INNER_(a, b) a##b
#define K8S_STATUS_CONCAT_(a, b) K8S_STATUS_CONCAT_INNER_(a, b)

/// Returns from the enclosing function if `expr` yields a non-ok Status.
#define K8S_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::k8s_agent::Status k8s_status_ = (expr);  \
    if (!k8s_status_.ok()) return k8s_status_; \
  } while (0)

// `lhs` may be a declaration ("auto pod"), so it cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define K8S_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

/// `K8S_ASSIGN_OR_RETURN(kube::Pod pod, kube::Pod::FromJson(body));`
#define K8S_ASSIGN_OR_RETURN(lhs, expr)                                        \
  K8S_ASSIGN_OR_RETURN_IMPL_(K8S_STATUS_CONCAT_(k8s_statusor_, __LINE__), lhs, \
                             expr)

#endif  // K8S_AGENT_PLUGIN_BASE_STATUS_H_
