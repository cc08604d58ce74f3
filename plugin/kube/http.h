// SPDX-License-Identifier: Apache-2.0
// The HTTP seam: what the Kubernetes client needs from a transport.

#ifndef K8S_AGENT_PLUGIN_KUBE_HTTP_H_
#define K8S_AGENT_PLUGIN_KUBE_HTTP_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::kube {

struct HttpRequest {
  std::string method = "GET";
  /// Path and query, already escaped: "/api/v1/namespaces/ns/pods/w0".
  std::string path;
  /// Extra headers as "Name: value". The transport adds Authorization.
  std::vector<std::string> headers;
  std::string body;
  /// A watch: no overall timeout, only the idle timeout below applies.
  bool streaming = false;
  /// Streaming only: fail with kUnavailable when no byte arrives for this
  /// long (a silently dead connection). 0 = none.
  int idle_timeout_ms = 0;
  /// Streaming over HTTP/2 only: after this long with nothing read on the
  /// connection send a PING, and fail with kUnavailable when nothing is
  /// read within `ping_timeout_ms` of it (see ReadIdlePing). 0 = never.
  int ping_after_ms = 0;
  int ping_timeout_ms = 0;
};

/// Receives one response. Every method is called from the event loop,
/// never from inside a libcurl callback, so a sink may parse, log and
/// even cancel its own call.
class HttpSink {
 public:
  virtual ~HttpSink() = default;
  /// Status line and headers (lower-cased names) are complete.
  virtual void OnHeaders(int http_status,
                         const std::map<std::string, std::string>& headers) = 0;
  /// Some body bytes; any size, from one byte to many kilobytes.
  virtual void OnData(std::string_view bytes) = 0;
  /// The response ended: ok after a complete body, otherwise why not
  /// (refused, reset, TLS, idle timeout). HTTP error statuses still end ok;
  /// the sink saw the status in OnHeaders.
  virtual void OnDone(const Status& status) = 0;
};

/// A request in flight. Destroying it cancels the request; the sink is
/// then never called again.
class HttpCall {
 public:
  virtual ~HttpCall() = default;
};

/// Starts requests. Abstract so unit tests script the server (ninja's
/// DiskInterface idea); CurlTransport is the real one.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual std::unique_ptr<HttpCall> Start(const HttpRequest& request,
                                          HttpSink* sink) = 0;
  /// Forgets the cached bearer token so the next request re-reads the
  /// token file (after a 401: projected tokens rotate). Default: nothing.
  virtual void InvalidateToken() {}
  /// Where the credential came from, for a 401's message, when the config
  /// alone cannot say ("the token of exec plugin P, which ran 2 time(s)").
  virtual std::string DescribeCredential() const { return ""; }
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_HTTP_H_
