// SPDX-License-Identifier: Apache-2.0
// CurlTransport's record of one request; internal to curl_transport.cc.

#ifndef K8S_AGENT_PLUGIN_KUBE_CURL_TRANSFER_H_
#define K8S_AGENT_PLUGIN_KUBE_CURL_TRANSFER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/curl_handles.h"
#include "plugin/kube/curl_transport.h"
#include "plugin/kube/http.h"
#include "plugin/kube/stream_liveness.h"

namespace k8s_agent::kube {

// One request: the easy handle and what its callbacks buffered for the
// next delivery from the loop.
struct CurlTransport::Transfer {
  CurlTransport* owner = nullptr;
  uint64_t id = 0;
  CurlEasy easy;
  CurlSlist headers;
  CurlSlist connect_to;     // tls-server-name's route.
  std::string description;  // "GET https://host/path", for messages.
  HttpSink* sink = nullptr;
  bool streaming = false;
  // Streaming requests: the idle limit and, on HTTP/2, the PING check.
  StreamLiveness liveness;
  char errbuf[CURL_ERROR_SIZE] = {};
  bool in_multi = false;
  // Set while the credential is being fetched (an exec plugin runs): the
  // request is configured and added to the multi handle once it is in.
  std::optional<HttpRequest> awaiting;

  int http_status = 0;
  std::map<std::string, std::string> response_headers;
  bool headers_complete = false;
  bool headers_delivered = false;
  std::string body;
  bool finished = false;
  Status result;
  bool cancelled = false;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CURL_TRANSFER_H_
