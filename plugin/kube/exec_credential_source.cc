// SPDX-License-Identifier: Apache-2.0
// ExecCredentialSource: the cache, the lock and the plugin run as loop states.

#include "plugin/kube/exec_credential_source.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/exec_protocol.h"

namespace k8s_agent::kube {

ExecCredentialSource::ExecCredentialSource(std::string plugin,
                                           CredentialCache cache,
                                           StartRun start)
    : plugin_(std::move(plugin)),
      cache_(std::move(cache)),
      start_(std::move(start)) {}

std::unique_ptr<ExecCredentialSource> ExecCredentialSource::ForConfig(
    const ExecConfig& exec, const ExecClusterInfo& info) {
  std::vector<std::string> env =
      ExecPluginEnv(exec, ProcessEnvironment(), ExecInfoJson(exec, info));
  CredentialCache cache(
      exec.cache_dir, CredentialCache::Key(exec, info.server, env),
      [] { return static_cast<int64_t>(std::time(nullptr)); });
  StartRun start = [exec,
                    env](TimePoint now) -> StatusOr<std::unique_ptr<ExecRun>> {
    K8S_ASSIGN_OR_RETURN(std::unique_ptr<ExecPluginRun> run,
                         ExecPluginRun::Start(exec, env, now));
    return std::unique_ptr<ExecRun>(std::move(run));
  };
  return std::make_unique<ExecCredentialSource>(
      "exec plugin " + exec.command + " (" + exec.where + ")", std::move(cache),
      std::move(start));
}

bool ExecCredentialSource::Usable() const {
  if (!have_ || stale_) return false;
  // No expiration: good until a 401 says otherwise.
  return cred_.expires_at == 0 || cache_.Fresh(cred_, "");
}

StatusOr<MaybeCredential> ExecCredentialSource::Get(TimePoint now) {
  if (state_ != State::kIdle) return MaybeCredential();
  if (failure_) {
    Status failed = std::move(*failure_);
    failure_.reset();
    return failed;
  }
  // A credential just fetched is answered once even when it already
  // expires within the margin: the requests that waited for it go, and
  // only later ones ask for another.
  if (!std::exchange(just_fetched_, false) && !Usable()) {
    // After a 401 the token just refused must not come back from the file
    // another agent wrote before; a newer one there is fine.
    refused_ = stale_ && have_ ? cred_.token : "";
    since_ = now;
    Step(now);
    if (state_ != State::kIdle) return MaybeCredential();
    if (failure_) {
      Status failed = std::move(*failure_);
      failure_.reset();
      return failed;
    }
    just_fetched_ = false;
  }
  return MaybeCredential(
      Credential{cred_.token, cred_.client_cert_pem, cred_.client_key_pem});
}

void ExecCredentialSource::Step(TimePoint now) {
  if (cache_.shared()) {
    // Fast path, and each retry while another agent runs the plugin: its
    // answer is renamed into place before it lets the lock go.
    if (StatusOr<ExecCredential> cached = cache_.ReadFresh(refused_);
        cached.ok()) {
      Settle(std::move(cached));
      return;
    }
    switch (cache_.TryLock()) {
      case CredentialCache::Lock::kHeld:
        // Whoever held the lock may have just written a fresh one.
        if (StatusOr<ExecCredential> cached = cache_.ReadFresh(refused_);
            cached.ok()) {
          cache_.Release();
          Settle(std::move(cached));
          return;
        }
        break;
      case CredentialCache::Lock::kBusy:
        if (now - since_ < kCredentialLockPatience) {
          state_ = State::kLocking;
          retry_at_ = now + kCredentialLockRetry;
          return;
        }
        LogWarning(plugin_ + ": another agent has held " + cache_.lock_file() +
                   " for " + FormatDuration(now - since_) +
                   "; running the plugin unshared");
        break;
      case CredentialCache::Lock::kUnshared:
        break;
    }
  }
  StartPlugin(now);
}

void ExecCredentialSource::StartPlugin(TimePoint now) {
  retry_at_ = TimePoint::max();
  StatusOr<std::unique_ptr<ExecRun>> run = start_(now);
  if (!run.ok()) {
    cache_.Release();
    Settle(run.status());
    return;
  }
  ++runs_;
  run_ = std::move(run).value();
  since_ = now;
  state_ = State::kRunning;
}

void ExecCredentialSource::Settle(StatusOr<ExecCredential> answer) {
  state_ = State::kIdle;
  retry_at_ = TimePoint::max();
  if (answer.ok()) {
    cred_ = std::move(answer).value();
    have_ = true;
    just_fetched_ = true;
    stale_ = false;
  } else {
    failure_ = answer.status();
  }
}

void ExecCredentialSource::CollectFds(std::vector<pollfd>* fds) {
  if (state_ == State::kRunning) run_->CollectFds(fds);
}

TimePoint ExecCredentialSource::NextWake() const {
  switch (state_) {
    case State::kLocking:
      return retry_at_;
    case State::kRunning:
      return run_->NextWake();
    case State::kIdle:
      break;
  }
  return TimePoint::max();
}

void ExecCredentialSource::OnFdReady(int fd, short revents, TimePoint now) {
  if (state_ != State::kRunning) return;
  run_->OnFdReady(fd, revents, now);
  OnTimer(now);
}

void ExecCredentialSource::OnTimer(TimePoint now) {
  if (state_ == State::kLocking && now >= retry_at_) {
    Step(now);
    return;
  }
  if (state_ != State::kRunning) return;
  if (!run_->done() && run_->NextWake() <= now) run_->OnTimer(now);
  if (!run_->done()) return;
  StatusOr<ExecCredential> answer = run_->result();
  if (answer.ok()) cache_.Store(*answer);
  cache_.Release();
  run_.reset();
  Settle(std::move(answer));
}

std::string ExecCredentialSource::Describe() const {
  return "the token from " + plugin_ + "; the plugin ran " +
         std::to_string(runs_) + (runs_ == 1 ? " time" : " times") +
         " in this agent";
}

std::string ExecCredentialSource::Waiting(TimePoint now) const {
  switch (state_) {
    case State::kRunning:
      return plugin_ + " has not printed a credential after " +
             FormatDuration(now - since_) +
             " (is it waiting for a login or a network? run it by hand to "
             "see); it is killed now, with its process group";
    case State::kLocking:
      return "another agent's run of " + plugin_ + " has held " +
             cache_.lock_file() + " for " + FormatDuration(now - since_) +
             " (that agent's plugin may be waiting for a login)";
    case State::kIdle:
      break;
  }
  return "";
}

}  // namespace k8s_agent::kube
