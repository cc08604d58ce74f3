// SPDX-License-Identifier: Apache-2.0
// What a failed libcurl transfer means to the caller: a CURLcode and what
// curl said about it, turned into a Status that names the request, the
// reason and the fix.

#ifndef K8S_AGENT_PLUGIN_KUBE_CURL_ERRORS_H_
#define K8S_AGENT_PLUGIN_KUBE_CURL_ERRORS_H_

#include <curl/curl.h>

#include <string>

#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"

namespace k8s_agent::kube {

/// One failed transfer, as read from its easy handle.
struct CurlFailure {
  CURLcode code = CURLE_OK;
  std::string description;      // "GET https://host/path".
  std::string error_buffer;     // CURLOPT_ERRORBUFFER's text; may be empty.
  bool used_proxy = false;      // CURLINFO_USED_PROXY.
  long proxy_connect_code = 0;  // CURLINFO_HTTP_CONNECTCODE.
};

/// The Status of `failure` (code != CURLE_OK) on `config`'s server.
/// kUnavailable for what may pass (refused, reset, timeouts, DNS, an
/// unreachable proxy); kFailedPrecondition for what the configuration must
/// fix (TLS trust, a proxy refusing the CONNECT); kInvalidArgument for a
/// bad URL. The message starts with the description and curl's reason.
Status MapCurlError(const CurlFailure& failure, const ClusterConfig& config);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CURL_ERRORS_H_
