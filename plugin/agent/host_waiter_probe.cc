// SPDX-License-Identifier: Apache-2.0
// HostWaiter's SSH stage: drive the SshProbe on a usable pod, decide what
// its answer means for the host, and let it outvote a sidecar's fatal
// wait. The rest of the class is in host_waiter.cc.

#include "plugin/agent/host_waiter.h"

#include <utility>

#include "plugin/agent/pod_target.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/tcp_connect.h"

namespace k8s_agent {
namespace {

// The same scale as a trace record's t_mono_us.
int64_t MonoMicros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             t.time_since_epoch())
      .count();
}

}  // namespace

// ---- Probing SSH ------------------------------------------------------------

void HostWaiter::Probe(const kube::Pod& pod, TimePoint now) {
  // A replacement pod (new UID) or a new IP invalidates the probe in
  // flight and any backoff earned against the old target.
  if (probe_.SetTarget(pod.uid, PodAddresses(pod)) && probed_) {
    LogInfo(host_.original + ": " + PodRef() +
            " changed (replaced or new IP); probing " + pod.pod_ip);
  }
  probed_ = true;
  if (probe_.state() == SshProbe::State::kConnecting) return;
  if (!probe_.due(now)) {
    state_ = State::kBackoff;
    return;
  }
  state_ = State::kProbing;
  if (probe_.failures() == 0) NoteState(PodSummary(pod) + ", connecting", now);
  probe_.Start(policy_.ssh, now);
  OnProbeSettled(now);
}

void HostWaiter::AbortAttempt() {
  // Destroying the connection closes its socket: an attempt against an
  // old IP or a pod that stopped running is simply abandoned.
  probe_.Abort();
}

void HostWaiter::OnProbeSettled(TimePoint now) {
  switch (probe_.state()) {
    case SshProbe::State::kReady: {
      state_ = State::kReady;
      std::string where = ssh::HostPort(probe_.ip(), policy_.ssh.port);
      std::string attempts = std::to_string(probe_.attempts()) + " attempt(s)";
      tracer_->RecordFields(host_.original, pod_name_, "ssh_ready",
                            {{trace_field::kAttemptTMonoUs,
                              MonoMicros(probe_.attempt_started())}},
                            where + " after " + attempts);
      LogInfo(host_.original + ": ssh to " + where + " ready after " +
              FormatDuration(now - started_) + " (" + attempts + ")");
      if (fatal_since_ != TimePoint::max()) {
        LogInfo(host_.original + ": launching although " + fatal_note_ +
                ": ssh answers");
      }
      // No more API traffic for this host once it is ready.
      DropWatchers();
      call_.reset();
      return;
    }
    case SshProbe::State::kFailed:
      Fail(probe_.status().WithContext("ssh to " + PodRef() + " at " +
                                       probe_.ip()));
      return;
    case SshProbe::State::kBackoff:
      if (!watcher_ && direct_pod_) {
        // The snapshot that looked ready may be stale (pod deleted, new
        // IP): from now on follow the pod, from the lookup's version.
        StartWatcher(direct_pod_, watch_from_rv_, now);
      }
      NoteState("Running at " + probe_.ip() + " but ssh is not ready", now);
      state_ = State::kBackoff;
      return;
    case SshProbe::State::kIdle:
    case SshProbe::State::kConnecting:
      return;
  }
}

std::unique_ptr<ssh::SshConnection> HostWaiter::TakeConnection() {
  return probe_.TakeConnection();
}

bool HostWaiter::ProbeDespite(const kube::Pod& pod, TimePoint now) {
  std::string note = FatalUnlessSshAnswers(pod, policy_.fatal_reasons);
  if (note.empty()) return false;
  if (fatal_since_ == TimePoint::max()) {
    fatal_since_ = now;
    LogInfo(host_.original + ": " + PodRef() + ": " + note +
            "; probing ssh anyway for up to " +
            FormatDuration(policy_.fatal_probe_grace) +
            " (sshd may run in another container)");
  }
  fatal_note_ = note;
  return now - fatal_since_ < policy_.fatal_probe_grace;
}

}  // namespace k8s_agent
