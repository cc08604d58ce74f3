// SPDX-License-Identifier: Apache-2.0
// The exec plugin's credential as a state machine on the event loop: when
// to run the plugin, waiting for another agent's run, and the answer.

#ifndef K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_SOURCE_H_
#define K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_SOURCE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/credential_cache.h"
#include "plugin/kube/credential_source.h"
#include "plugin/kube/exec_credential.h"
#include "plugin/kube/exec_plugin.h"

namespace k8s_agent::kube {

/// How often the shared cache's lock is tried while another agent holds it
/// (its plugin runs). Why 50 ms: a plugin takes 0.3 s to seconds, so this
/// adds at most 50 ms to the agents that wait, at 20 wake-ups a second;
/// the cache file is re-read at each, so the waiters pick up the answer
/// as soon as it is renamed into place, usually before the lock is free.
constexpr Duration kCredentialLockRetry = milliseconds(50);
/// A lock held longer belongs to a stuck process (its plugin is killed
/// after kExecTimeoutSeconds): run the plugin unshared instead.
constexpr Duration kCredentialLockPatience = seconds(kExecTimeoutSeconds + 10);

/// An exec plugin behind the cross-process cache. States and transitions:
///
///   kIdle --Get(), no usable credential--> fresh in the cache file? adopt
///         else TryLock: kHeld or kUnshared --> kRunning (a run starts)
///                       kBusy --> kLocking
///   kLocking --timer (kCredentialLockRetry)--> file fresh: adopt, kIdle;
///            lock taken: kRunning; held past kCredentialLockPatience:
///            kRunning unshared
///   kRunning --run done--> stored (if the lock is ours), lock released,
///            kIdle with the credential or the failure for the next Get()
///
/// Get() returns std::nullopt in kLocking and kRunning. The credential is
/// kept in memory too: one without an expiration lives only here, as in
/// kubectl. Time comes in as arguments (the loop's clock) and, for
/// expiry, from the cache's WallClock, so tests drive it by hand.
class ExecCredentialSource : public CredentialSource {
 public:
  using StartRun =
      std::function<StatusOr<std::unique_ptr<ExecRun>>(TimePoint now)>;

  /// `plugin` names the plugin in messages ("exec plugin aws (FILE: user
  /// \"u\")").
  ExecCredentialSource(std::string plugin, CredentialCache cache,
                       StartRun start);

  /// The production source: ExecPluginRun with the process environment.
  static std::unique_ptr<ExecCredentialSource> ForConfig(
      const ExecConfig& exec, const ExecClusterInfo& info);

  StatusOr<MaybeCredential> Get(TimePoint now) override;
  void Invalidate() override { stale_ = true; }
  std::string Describe() const override;
  std::string Waiting(TimePoint now) const override;

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

  enum class State { kIdle, kLocking, kRunning };
  State state() const { return state_; }
  /// Plugin runs started by this source (tests, messages).
  int runs() const { return runs_; }

 private:
  bool Usable() const;
  // From kIdle or kLocking: the cache, the lock, or a run.
  void Step(TimePoint now);
  void StartPlugin(TimePoint now);
  void Settle(StatusOr<ExecCredential> answer);

  std::string plugin_;
  CredentialCache cache_;
  StartRun start_;
  State state_ = State::kIdle;
  std::unique_ptr<ExecRun> run_;
  TimePoint since_{};  // When the current wait began.
  TimePoint retry_at_ = TimePoint::max();
  std::string refused_;  // The token a 401 refused, while refreshing.
  ExecCredential cred_;
  bool have_ = false;
  bool stale_ = false;
  bool just_fetched_ = false;      // Answered once, even if near its expiry.
  std::optional<Status> failure_;  // For the next Get().
  int runs_ = 0;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_SOURCE_H_
