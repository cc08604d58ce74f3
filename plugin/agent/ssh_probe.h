// SPDX-License-Identifier: Apache-2.0
// The SSH probe of one pod: the one copy of "does sshd answer there yet?"
// with its retry rules, for the per-host wait and for --hostfile --ssh-ready.

#ifndef K8S_AGENT_PLUGIN_AGENT_SSH_PROBE_H_
#define K8S_AGENT_PLUGIN_AGENT_SSH_PROBE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugin/base/backoff.h"
#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/ssh/ssh_client.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {

/// Proves SSH works on a pod: connect, handshake, host key, auth.
///
///   kIdle --Start()--> kConnecting --ready--> kReady
///                          | connect error, another pod IP left:
///                          |   the next IP, in the same attempt
///                          | refused (every IP): Backoff::SshProbeDefaults
///                          | reset/closed/throttled/timeout:
///                          |   Backoff::SshProbeTroubleDefaults
///                          v
///                      kBackoff --due(), Start()--> kConnecting
///   kConnecting --auth, host key, algorithms (ClassifyForRetry: not
///   kBackoff)--> kFailed at once
///
/// A refused connect costs the pod one RST while sshd starts, so it is
/// retried within milliseconds; anything else means something answers
/// there, and retrying that every few milliseconds only feeds what throttles
/// it (sshd's MaxStartups). The owner drives it from its loop callbacks and
/// reads the state after each; the probe never calls back.
class SshProbe {
 public:
  enum class State { kIdle, kConnecting, kBackoff, kReady, kFailed };

  /// `who` prefixes its log lines ("w-0").
  SshProbe(ssh::SshConnector* connector, std::string who, uint64_t seed);
  ~SshProbe();

  /// The pod to probe: its uid and its IPs in order (status.podIPs, which
  /// starts with status.podIP). True when that differs from the previous
  /// target: the attempt in flight and the backoff earned are dropped.
  bool SetTarget(const std::string& uid, std::vector<std::string> ips);

  /// kIdle, or kBackoff whose retry time has come.
  bool due(TimePoint now) const;
  /// Starts an attempt on the first IP with `options`; call when due().
  void Start(const ssh::ResolvedSshOptions& options, TimePoint now);
  /// Drops the attempt in flight (its socket closes): back to kIdle, or to
  /// kBackoff when a retry time is pending.
  void Abort();

  State state() const { return state_; }
  /// kFailed: why, naming the address.
  const Status& status() const { return status_; }
  /// The IP of the attempt in flight or the last one; on kReady, the one
  /// that answered.
  const std::string& ip() const { return ip_; }
  const std::vector<std::string>& ips() const { return ips_; }
  int attempts() const { return attempts_; }
  /// Failed attempts (all IPs tried) since the target was set.
  int failures() const { return failures_; }
  const std::string& last_error() const { return last_error_; }
  TimePoint retry_at() const { return retry_at_; }
  TimePoint attempt_started() const { return attempt_started_; }
  /// kReady: the authenticated connection.
  std::unique_ptr<ssh::SshConnection> TakeConnection();

  void CollectFds(std::vector<pollfd>* fds);
  /// The attempt's wake-up, or retry_at() in kBackoff.
  TimePoint NextWake() const;
  /// Loop events for the attempt. True when the state changed (the attempt
  /// settled): the owner then looks at state().
  bool OnFdReady(int fd, short revents, TimePoint now);
  bool OnTimer(TimePoint now);

 private:
  void Connect(TimePoint now);
  // Reads a finished attempt; true when it settled the state.
  bool Settle(TimePoint now);

  ssh::SshConnector* connector_;
  std::string who_;
  Backoff refused_backoff_;  // sshd is starting: nothing listens yet.
  Backoff trouble_backoff_;  // Something answers there, badly.

  State state_ = State::kIdle;
  Status status_;
  std::string uid_;
  std::vector<std::string> ips_;
  size_t ip_index_ = 0;
  std::string ip_;
  ssh::ResolvedSshOptions options_;
  std::unique_ptr<ssh::SshConnection> conn_;
  bool all_refused_ = true;  // This attempt's IPs so far.
  int attempts_ = 0;
  int failures_ = 0;
  std::string last_error_;
  TimePoint retry_at_ = TimePoint::min();
  TimePoint attempt_started_{};
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_SSH_PROBE_H_
