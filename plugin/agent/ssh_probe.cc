// SPDX-License-Identifier: Apache-2.0
// SshProbe: one attempt at a time over the pod's IPs; see ssh_probe.h.

#include "plugin/agent/ssh_probe.h"

#include <algorithm>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/ssh/tcp_connect.h"

namespace k8s_agent {

SshProbe::SshProbe(ssh::SshConnector* connector, std::string who, uint64_t seed)
    : connector_(connector),
      who_(std::move(who)),
      refused_backoff_(Backoff::SshProbeDefaults(), seed),
      trouble_backoff_(Backoff::SshProbeTroubleDefaults(), seed + 3) {}

SshProbe::~SshProbe() = default;

bool SshProbe::SetTarget(const std::string& uid, std::vector<std::string> ips) {
  if (uid == uid_ && ips == ips_) return false;
  // A replacement pod or a new IP: the answer and the backoff earned
  // against the old target mean nothing for the new one.
  conn_.reset();
  uid_ = uid;
  ips_ = std::move(ips);
  ip_index_ = 0;
  ip_ = ips_.empty() ? "" : ips_[0];
  state_ = State::kIdle;
  status_ = OkStatus();
  retry_at_ = TimePoint::min();
  failures_ = 0;
  last_error_.clear();
  refused_backoff_.Reset();
  trouble_backoff_.Reset();
  return true;
}

bool SshProbe::due(TimePoint now) const {
  if (ips_.empty()) return false;
  return state_ == State::kIdle ||
         (state_ == State::kBackoff && now >= retry_at_);
}

void SshProbe::Start(const ssh::ResolvedSshOptions& options, TimePoint now) {
  options_ = options;
  ip_index_ = 0;
  all_refused_ = true;
  ++attempts_;
  attempt_started_ = now;
  Connect(now);
}

void SshProbe::Connect(TimePoint now) {
  ip_ = ips_[ip_index_];
  state_ = State::kConnecting;
  conn_ = connector_->Connect(options_, ip_, now);
  Settle(now);
}

void SshProbe::Abort() {
  if (state_ != State::kConnecting) return;
  conn_.reset();
  state_ = retry_at_ == TimePoint::min() ? State::kIdle : State::kBackoff;
}

bool SshProbe::Settle(TimePoint now) {
  if (!conn_ || state_ != State::kConnecting) return false;
  switch (conn_->state()) {
    case ssh::SshConnection::State::kReady:
      state_ = State::kReady;
      return true;
    case ssh::SshConnection::State::kFailed:
      break;
    default:
      return false;
  }
  Status why = conn_->status();
  bool refused = conn_->refused();
  bool connect_failed = conn_->connect_failed();
  conn_.reset();
  // The one classifier: only a transient code is worth another attempt;
  // for SSH a denial is a rejected key, never a cache catching up.
  if (ClassifyForRetry(why.code()) != RetryClass::kBackoff) {
    state_ = State::kFailed;
    status_ = why;
    last_error_ = why.message();
    return true;
  }
  all_refused_ = all_refused_ && refused;
  if (connect_failed && ip_index_ + 1 < ips_.size()) {
    // Dual-stack: sshd may listen on one family only. Nothing answered
    // here, so the next address costs nothing and may well answer.
    ++ip_index_;
    LogDebug(who_ + ": " + why.message() + "; trying " +
             ssh::HostPort(ips_[ip_index_], options_.port));
    Connect(now);
    return state_ != State::kConnecting;
  }
  ++failures_;
  last_error_ = why.message();
  Backoff& b = all_refused_ ? refused_backoff_ : trouble_backoff_;
  retry_at_ = now + b.Next(now);
  state_ = State::kBackoff;
  return true;
}

std::unique_ptr<ssh::SshConnection> SshProbe::TakeConnection() {
  return std::move(conn_);
}

void SshProbe::CollectFds(std::vector<pollfd>* fds) {
  if (conn_ && state_ == State::kConnecting) conn_->CollectFds(fds);
}

TimePoint SshProbe::NextWake() const {
  if (state_ == State::kConnecting && conn_) return conn_->NextWake();
  if (state_ == State::kBackoff) return retry_at_;
  return TimePoint::max();
}

bool SshProbe::OnFdReady(int fd, short revents, TimePoint now) {
  if (!conn_ || state_ != State::kConnecting) return false;
  conn_->OnFdReady(fd, revents, now);
  return Settle(now);
}

bool SshProbe::OnTimer(TimePoint now) {
  if (!conn_ || state_ != State::kConnecting) return false;
  if (conn_->NextWake() <= now) conn_->OnTimer(now);
  return Settle(now);
}

}  // namespace k8s_agent
