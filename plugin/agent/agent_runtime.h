// SPDX-License-Identifier: Apache-2.0
// What every mode that reaches the cluster shares: the settings, built
// once from the command line, and the machinery built from them (signals,
// the API transport and client, the SSH connector, the loop, a seed).

#ifndef K8S_AGENT_PLUGIN_AGENT_AGENT_RUNTIME_H_
#define K8S_AGENT_PLUGIN_AGENT_AGENT_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/event_loop.h"
#include "plugin/base/signals.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/kube/curl_transport.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/shared_lookup_transport.h"
#include "plugin/ssh/ssh_client.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {

/// The settings RunAgent and RunHostfile both take.
struct RunSetup {
  kube::ClusterConfig cluster;
  /// Each host's ssh settings (ssh_config is read per destination).
  ssh::SshSettingsFor ssh_for;
  /// --namespace; empty: a host's DNS name's namespace, else the
  /// cluster's default.
  std::string ns;
  std::string label_selector;  ///< --selector.
  /// --timeout: bound on one host's whole wait (--hostfile: on the list).
  Duration timeout = std::chrono::minutes(10);
  /// --api-first-answer-timeout: the budget before any API answer.
  Duration api_first_answer_timeout = std::chrono::seconds(30);
  /// --watch-idle-timeout: see PodWatcher::set_watch_idle_timeout.
  Duration watch_idle_timeout = std::chrono::seconds(90);
  /// --lookup-cache: see SharedLookupTransport; 0 = off.
  Duration lookup_cache{};
};

/// One run's machinery, set up the same way for every mode. Owns the
/// pollables it adds to its loop; the caller adds its own.
class AgentRuntime {
 public:
  /// Fails when signals cannot be watched or the API transport cannot be
  /// set up (unreadable CA, certificate or token file), or the first
  /// credential cannot be had: an exec plugin runs on the loop here, for at
  /// most `setup.timeout`, while signals are served (one received ends the
  /// wait; signals() then says which, and the plugin is killed with the
  /// runtime).
  static StatusOr<std::unique_ptr<AgentRuntime>> Create(const RunSetup& setup,
                                                        Clock* clock);
  ~AgentRuntime();
  AgentRuntime(const AgentRuntime&) = delete;
  AgentRuntime& operator=(const AgentRuntime&) = delete;

  EventLoop* loop() { return &loop_; }
  kube::KubeClient* client() { return client_.get(); }
  ssh::SshConnector* connector() { return connector_.get(); }
  const SignalWatcher& signals() const { return *signals_; }
  /// Distinct per process, so 128 agents started at once jitter apart.
  uint64_t seed() const { return seed_; }
  /// How long Create waited for the first credential: the hosts' waits get
  /// what is left of --timeout.
  Duration credential_wait() const { return credential_wait_; }

  /// Runs the loop until `done` or a termination signal arrives; then
  /// signals().received() says which.
  Status RunUntil(const std::function<bool()>& done);

  /// Drops the API client and its transport (connections, TLS state,
  /// buffers) and gives the heap back: an agent that stays attached for
  /// the whole job then holds little more than its SSH session. Nothing
  /// may use client() afterwards.
  void ReleaseApi();

 private:
  explicit AgentRuntime(Clock* clock);
  Status AwaitCredential(Duration timeout);

  std::unique_ptr<SignalWatcher> signals_;
  std::unique_ptr<kube::CurlTransport> transport_;
  // In front of transport_ when --lookup-cache is on.
  std::unique_ptr<kube::SharedLookupTransport> shared_lookup_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<ssh::SshConnector> connector_;
  EventLoop loop_;
  uint64_t seed_ = 0;
  Clock* clock_;
  Duration credential_wait_{};
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_AGENT_RUNTIME_H_
