// SPDX-License-Identifier: Apache-2.0
// HttpTransport over one libcurl multi handle whose sockets join our poll loop.

#ifndef K8S_AGENT_PLUGIN_KUBE_CURL_TRANSPORT_H_
#define K8S_AGENT_PLUGIN_KUBE_CURL_TRANSPORT_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/event_loop.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/kube/connection_sockets.h"
#include "plugin/kube/credential_source.h"
#include "plugin/kube/curl_handles.h"
#include "plugin/kube/http.h"

namespace k8s_agent::kube {

/// The production transport. One CURLM keeps the connection cache, so a
/// GET and the WATCH after it share one TLS connection. curl's sockets and
/// timer are exposed through Pollable (CURLMOPT_SOCKETFUNCTION and
/// CURLMOPT_TIMERFUNCTION + curl_multi_socket_action): register the
/// transport with the EventLoop. Sinks are called from OnFdReady/OnTimer,
/// after curl has returned, never from inside a libcurl callback.
///
/// The transport must outlive every HttpCall it returned.
class CurlTransport : public HttpTransport, public Pollable {
 public:
  /// Checks the CA, client certificate and token files are readable, asks
  /// for the first credential (an exec plugin is started here; it runs on
  /// the event loop, see CredentialReady) and sets up the multi handle. TLS
  /// is verified unless the kubeconfig said insecure-skip-tls-verify.
  static StatusOr<std::unique_ptr<CurlTransport>> Create(
      const ClusterConfig& config, Clock* clock);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  std::unique_ptr<HttpCall> Start(const HttpRequest& request,
                                  HttpSink* sink) override;
  /// The next request re-reads the token file even if it looks unchanged,
  /// or gets a new exec credential (not the one just refused).
  void InvalidateToken() override;
  std::string DescribeCredential() const override {
    return credentials_->Describe();
  }

  /// Whether the credential is in (true) or still being fetched (false);
  /// a failed fetch is returned once. Requests started meanwhile wait for
  /// it, with their sinks not called until it is in or failed.
  StatusOr<bool> CredentialReady(TimePoint now);
  /// What the credential waits for ("exec plugin P has not printed a
  /// credential after 3s ..."); "" when it does not.
  std::string CredentialWait(TimePoint now) const {
    return credentials_->Waiting(now);
  }

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

  /// Requests in flight (tests, leak checks).
  size_t active_requests() const { return transfers_.size(); }
  /// New TCP connections opened by completed requests (CURLINFO_NUM_CONNECTS
  /// summed); tests use it to prove connection reuse.
  long connections_opened() const { return connections_opened_; }
  /// Sockets curl currently wants polled.
  size_t sockets() const { return sockets_.size(); }

  /// A non-streaming request fails when no byte arrives for this long
  /// (below 1 byte/s over the window), by default. No total cap: a slow
  /// but progressing LIST may finish, and the caller's own deadline (the
  /// host's --timeout) cancels the call (as kubectl sets no request
  /// timeout by default).
  static constexpr long kRequestStallSeconds = 30;
  static constexpr int kConnectTimeoutMs = 10000;

  /// The stall window of the requests started from now on: `stall`,
  /// rounded up to whole seconds, never below kRequestStallSeconds. The
  /// agent passes --api-first-answer-timeout, so a server allowed that
  /// long to answer at all is allowed it for each answer's first byte: a
  /// LIST that takes 40 s to start (a huge namespace, a slow etcd) could
  /// otherwise never succeed, each attempt cut at 30 s and retried.
  void set_request_stall(Duration stall);
  Duration request_stall() const { return std::chrono::seconds(stall_s_); }

 private:
  struct Transfer;
  class Call;

  CurlTransport(const ClusterConfig& config, Clock* clock);
  Status Init();
  void SetTransferOptions(Transfer* t, bool streaming);
  Status Configure(Transfer* t, const HttpRequest& request,
                   const Credential& credential);
  // Adds `t` to the multi handle with the current credential, or leaves it
  // awaiting one; a failure is delivered through its sink.
  void Launch(Transfer* t, const HttpRequest& request, TimePoint now);
  // The awaited credential is in, or failed: the waiting requests go.
  void ResumeAwaiting(TimePoint now);
  void FailEarly(Transfer* t, Status why);
  void Cancel(uint64_t id);
  void SocketAction(int fd, int mask);
  void ReadCompletions();
  // Streaming transfers: each one's StreamLiveness decides; this reads
  // the sockets, sends the PINGs and ends the dead.
  void CheckLiveness(TimePoint now);
  // Ends `t` with `why` and keeps its connection from being reused.
  void FailTransfer(Transfer* t, Status why);
  int Http2Socket(const Transfer& t) const;
  void Deliver();

  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* self,
                      void* socket_data);
  static int OnTimerSet(CURLM* multi, long timeout_ms, void* self);
  // CURLOPT_SOCKOPTFUNCTION / CURLOPT_CLOSESOCKETFUNCTION: which socket
  // each connection uses, for the PING check.
  static int OnSocketOpened(void* transfer, curl_socket_t fd,
                            curlsocktype purpose);
  static int OnSocketClosed(void* self, curl_socket_t fd);
  static size_t OnWrite(char* data, size_t size, size_t n, void* p);
  static size_t OnHeader(char* data, size_t size, size_t n, void* p);

  ClusterConfig config_;
  Clock* clock_;
  // The connection pool lives in the share, not the multi, so that
  // pinger_, an easy handle that never transfers, can reach the watches'
  // connections: curl_easy_upkeep() sends HTTP/2 PINGs on the pool it
  // sees. Declared first: the share outlives every handle using it.
  CurlShare share_;
  CurlMulti multi_;
  CurlEasy pinger_;
  std::map<int, short> sockets_;  // fd -> POLLIN/POLLOUT wanted by curl.
  ConnectionSockets connection_sockets_;  // By CURLINFO_CONN_ID.
  TimePoint timer_at_ = TimePoint::max();
  std::map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  uint64_t next_id_ = 1;
  uint64_t delivering_ = 0;  // Transfer whose sink is being called.
  bool needs_delivery_ = false;
  long connections_opened_ = 0;
  long stall_s_ = kRequestStallSeconds;  // See set_request_stall.

  std::unique_ptr<CredentialSource> credentials_;
  std::vector<int> token_fds_;  // The token source's, from CollectFds.
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CURL_TRANSPORT_H_
