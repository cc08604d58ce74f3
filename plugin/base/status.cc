// SPDX-License-Identifier: Apache-2.0
// Status helpers and the single retry classifier.

#include "plugin/base/status.h"

#include <cerrno>
#include <cstring>

namespace k8s_agent {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "InvalidArgument";
    case Code::kNotFound:
      return "NotFound";
    case Code::kUnauthenticated:
      return "Unauthenticated";
    case Code::kPermissionDenied:
      return "PermissionDenied";
    case Code::kExpired:
      return "Expired";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kDeadlineExceeded:
      return "DeadlineExceeded";
    case Code::kFailedPrecondition:
      return "FailedPrecondition";
    case Code::kResourceExhausted:
      return "ResourceExhausted";
    case Code::kTooLarge:
      return "TooLarge";
    case Code::kCancelled:
      return "Cancelled";
    case Code::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_).WithRetryAfter(retry_after_);
}

Status Status::WithRetryAfter(std::chrono::milliseconds delay) const {
  Status s = *this;
  s.retry_after_ = delay;
  return s;
}

Status InvalidArgumentError(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
Status NotFoundError(std::string m) {
  return Status(Code::kNotFound, std::move(m));
}
Status UnauthenticatedError(std::string m) {
  return Status(Code::kUnauthenticated, std::move(m));
}
Status PermissionDeniedError(std::string m) {
  return Status(Code::kPermissionDenied, std::move(m));
}
Status ExpiredError(std::string m) {
  return Status(Code::kExpired, std::move(m));
}
Status UnavailableError(std::string m) {
  return Status(Code::kUnavailable, std::move(m));
}
Status DeadlineExceededError(std::string m) {
  return Status(Code::kDeadlineExceeded, std::move(m));
}
Status FailedPreconditionError(std::string m) {
  return Status(Code::kFailedPrecondition, std::move(m));
}
Status ResourceExhaustedError(std::string m) {
  return Status(Code::kResourceExhausted, std::move(m));
}
Status TooLargeError(std::string m) {
  return Status(Code::kTooLarge, std::move(m));
}
Status CancelledError(std::string m) {
  return Status(Code::kCancelled, std::move(m));
}
Status InternalError(std::string m) {
  return Status(Code::kInternal, std::move(m));
}

Status ErrnoError(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  switch (err) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ETIMEDOUT:
    case EPIPE:
    case EAGAIN:
    case EINTR:
      return UnavailableError(std::move(message));
    case ENOENT:
      return NotFoundError(std::move(message));
    case EACCES:
    case EPERM:
      return PermissionDeniedError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

RetryClass ClassifyForRetry(Code code) {
  switch (code) {
    case Code::kOk:
      return RetryClass::kNone;
    case Code::kUnavailable:
    case Code::kResourceExhausted:  // 429: the server asks us to slow down.
      return RetryClass::kBackoff;
    case Code::kExpired:
      return RetryClass::kRelist;
    case Code::kUnauthenticated:
      return RetryClass::kReauthenticate;
    case Code::kPermissionDenied:
      return RetryClass::kMaybeCatchingUp;
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kDeadlineExceeded:
    case Code::kFailedPrecondition:
    case Code::kTooLarge:
    case Code::kCancelled:
    case Code::kInternal:
      return RetryClass::kFail;
  }
  return RetryClass::kFail;
}

}  // namespace k8s_agent
