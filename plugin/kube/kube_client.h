// SPDX-License-Identifier: Apache-2.0
// Pods API calls (list, watch) over an HttpTransport. No retries here.

#ifndef K8S_AGENT_PLUGIN_KUBE_KUBE_CLIENT_H_
#define K8S_AGENT_PLUGIN_KUBE_KUBE_CLIENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/kube/http.h"
#include "plugin/kube/pod.h"

namespace k8s_agent::kube {

/// ListOptions::limit for label-selector lists: paged, as client-go's
/// reflector pages them, so a namespace with thousands of pods never
/// produces one huge answer.
constexpr int kListPageSize = 500;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int limit = 0;  ///< 0 = no paging.
  std::string continue_token;
  /// "" reads from etcd (a quorum read); "0" lets the watch cache answer
  /// with its current version. Not sent with a continue token (a page
  /// belongs to the first page's snapshot).
  std::string resource_version;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  int timeout_seconds = 0;  ///< Server-side timeout; 0 = server default.
  bool allow_bookmarks = true;
  /// HTTP/2 liveness of the watch's connection (HttpRequest::ping_after_ms).
  Duration ping_after{};
  Duration ping_timeout{};
  /// Runs when the server answers 200: the watch is open (admitted, not
  /// queued or refused), whether or not any event follows.
  std::function<void()> on_open;
};

/// An API call in flight; destroying it cancels the call and its callbacks.
///
/// The one rule for callbacks, here and in every layer above: a callback
/// may destroy the object that runs it (a call, a PodWatcher), so owners
/// reset them wherever they are done with them, with nothing parked for
/// later. Whoever runs a callback therefore runs it as its last act, from
/// a copy (moved, if it runs once), or checks a liveness token before it
/// goes on: WatchCall between events, CurlTransport (delivering_) between
/// a sink's headers, data and end.
using ApiCall = std::unique_ptr<HttpCall>;

/// Builds requests, decodes answers and maps failures to Codes, once:
/// 401 kUnauthenticated, 403 kPermissionDenied (naming verb and resource),
/// 404 kNotFound, 410 kExpired, 429 kResourceExhausted, with the server's
/// Retry-After in Status::retry_after(), an over-long answer kTooLarge,
/// 5xx and transport errors kUnavailable, TLS/CA problems
/// kFailedPrecondition. Callbacks run from the event loop.
class KubeClient {
 public:
  /// `transport` must outlive the client.
  KubeClient(HttpTransport* transport, ClusterConfig config);

  using ListCallback = std::function<void(StatusOr<PodList>)>;
  using EventCallback = std::function<void(const WatchEvent&)>;
  using EndCallback = std::function<void(const Status&)>;

  ApiCall ListPods(const std::string& ns, const ListOptions& options,
                   ListCallback done);
  /// Streams events until the server ends the watch (`end` gets ok), the
  /// connection fails, or an event cannot be decoded (kInternal). An
  /// in-stream ERROR event is delivered to `on_event` as kError.
  ApiCall WatchPods(const std::string& ns, const WatchOptions& options,
                    EventCallback on_event, EndCallback end);

  /// After a 401: makes the transport re-read the token file.
  void InvalidateToken() { transport_->InvalidateToken(); }

  /// Requests started so far (tests and traces count API load).
  int requests() const { return requests_; }
  /// The API server has answered at least once (any HTTP status): from
  /// then on an outage gets the whole --timeout, before it only the
  /// first-answer budget (a wrong --server should fail in seconds).
  bool answered() const { return answered_; }

  const ClusterConfig& config() const { return config_; }

 private:
  class BufferedCall;
  class WatchCall;
  // Turns a failed answer into the classified Status, naming the RBAC verb
  // for 401/403 and carrying Retry-After in the Status.
  Status AnswerError(const char* verb, const std::string& ns, int http_status,
                     const std::map<std::string, std::string>& headers,
                     std::string_view body);
  ApiCall StartBuffered(HttpRequest request,
                        std::function<void(StatusOr<std::string>)> done,
                        const char* verb, const std::string& ns);

  HttpTransport* transport_;
  ClusterConfig config_;
  int requests_ = 0;
  bool answered_ = false;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_KUBE_CLIENT_H_
