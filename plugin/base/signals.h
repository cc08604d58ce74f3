// SPDX-License-Identifier: Apache-2.0
// Termination signals delivered through the event loop (signalfd).

#ifndef K8S_AGENT_PLUGIN_BASE_SIGNALS_H_
#define K8S_AGENT_PLUGIN_BASE_SIGNALS_H_

#include <memory>

#include "plugin/base/event_loop.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent {

/// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT and reads them from a
/// signalfd, so a signal is just another fd event: it cannot interrupt a
/// half-done write or race the poll (ninja's ppoll mask, done the Linux
/// way). Also ignores SIGPIPE: a closed stdout must surface as EPIPE, not
/// kill the agent.
class SignalWatcher : public Pollable {
 public:
  static StatusOr<std::unique_ptr<SignalWatcher>> Create();
  ~SignalWatcher() override;

  /// The first termination signal received, or 0.
  int received() const { return received_; }

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override { return TimePoint::max(); }
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint) override {}

 private:
  SignalWatcher() = default;
  UniqueFd fd_;
  int received_ = 0;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_SIGNALS_H_
