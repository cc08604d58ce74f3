// SPDX-License-Identifier: Apache-2.0
// The one mapping from Kubernetes answers (HTTP status, Status objects) to
// Codes.

#ifndef K8S_AGENT_PLUGIN_KUBE_API_STATUS_H_
#define K8S_AGENT_PLUGIN_KUBE_API_STATUS_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugin/base/status.h"

namespace k8s_agent::kube {

/// Classifies an API answer. `http_status` is the HTTP status or the
/// Status object's `code` (0 when absent); `reason` is the Status object's
/// `reason` ("Expired", "Gone", "TooManyRequests", ...). Used for HTTP
/// responses and in-stream ERROR events alike, so both paths agree:
/// 401 kUnauthenticated, 403 kPermissionDenied, 404 kNotFound,
/// 410/Expired/Gone kExpired, 429 kResourceExhausted, 5xx kUnavailable,
/// 400/422 kInvalidArgument, anything else kInternal.
Status ClassifyApiStatus(int http_status, std::string_view reason,
                         std::string message);

/// Builds the Status for a non-2xx answer from its body: a `kind: Status`
/// object contributes reason and message; any other body an excerpt.
Status StatusFromApiResponse(int http_status, std::string_view body);

/// Same, for an already parsed Status object (in-stream ERROR events).
/// `details.retryAfterSeconds` becomes the Status's retry_after().
Status StatusFromApiObject(const nlohmann::json& object, int http_status);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_API_STATUS_H_
