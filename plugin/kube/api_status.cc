// SPDX-License-Identifier: Apache-2.0
// Maps Kubernetes HTTP statuses and Status objects to Codes.

#include "plugin/kube/api_status.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "plugin/base/strings.h"
#include "plugin/kube/json_depth.h"

namespace k8s_agent::kube {

Status ClassifyApiStatus(int http_status, std::string_view reason,
                         std::string message) {
  // Kubernetes 1.17 and earlier said "Gone" where newer servers say
  // "Expired"; both mean the resourceVersion was compacted away.
  if (http_status == 410 || reason == "Expired" || reason == "Gone") {
    return ExpiredError(std::move(message));
  }
  if (http_status == 429 || reason == "TooManyRequests") {
    return ResourceExhaustedError(std::move(message));
  }
  if (http_status == 401 || reason == "Unauthorized") {
    return UnauthenticatedError(std::move(message));
  }
  if (http_status == 403 || reason == "Forbidden") {
    return PermissionDeniedError(std::move(message));
  }
  if (http_status == 404 || reason == "NotFound") {
    return NotFoundError(std::move(message));
  }
  if (http_status >= 500 || reason == "ServiceUnavailable" ||
      reason == "InternalError" || reason == "Timeout" ||
      reason == "ServerTimeout") {
    return UnavailableError(std::move(message));
  }
  if (http_status == 400 || http_status == 422 || reason == "BadRequest" ||
      reason == "Invalid") {
    return InvalidArgumentError(std::move(message));
  }
  return InternalError(std::move(message));
}

Status StatusFromApiObject(const nlohmann::json& object, int http_status) {
  std::string reason;
  std::string message;
  int code = http_status;
  int64_t retry_after_s = 0;
  if (object.is_object()) {
    auto it = object.find("reason");
    if (it != object.end() && it->is_string()) reason = it->get<std::string>();
    it = object.find("message");
    if (it != object.end() && it->is_string()) {
      message = Printable(it->get<std::string>(), 512);
    }
    it = object.find("code");
    if (code == 0 && it != object.end() && it->is_number_integer()) {
      code = it->get<int>();
    }
    // 429 from priority and fairness and 504 for a future resourceVersion
    // say when to come back in details.retryAfterSeconds.
    it = object.find("details");
    if (it != object.end() && it->is_object()) {
      auto after = it->find("retryAfterSeconds");
      if (after != it->end() && after->is_number_integer()) {
        retry_after_s = std::clamp<int64_t>(after->get<int64_t>(), 0, 3600);
      }
    }
  }
  std::string text = "HTTP " + std::to_string(code);
  if (!reason.empty()) text += " " + reason;
  if (!message.empty()) text += ": " + message;
  return ClassifyApiStatus(code, reason, std::move(text))
      .WithRetryAfter(std::chrono::seconds(retry_after_s));
}

Status StatusFromApiResponse(int http_status, std::string_view body) {
  nlohmann::json object;
  if (CheckJsonDepth(body).ok()) {
    object = nlohmann::json::parse(body, nullptr, false);
  }
  if (!object.is_discarded() && object.is_object()) {
    auto kind = object.find("kind");
    if (kind != object.end() && kind->is_string() && *kind == "Status") {
      return StatusFromApiObject(object, http_status);
    }
  }
  std::string text = "HTTP " + std::to_string(http_status);
  std::string_view trimmed = Trim(body);
  if (!trimmed.empty()) text += ": " + Printable(trimmed, 200);
  return ClassifyApiStatus(http_status, "", std::move(text));
}

}  // namespace k8s_agent::kube
