// SPDX-License-Identifier: Apache-2.0
// AgentRuntime: the set-up RunAgent and RunHostfile share.

#include "plugin/agent/agent_runtime.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "plugin/agent/idle_memory.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {

namespace {

// Wakes the loop at a deadline; nothing else.
class WakeAt : public Pollable {
 public:
  explicit WakeAt(TimePoint at) : at_(at) {}
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override {
    return fired_ ? TimePoint::max() : at_;
  }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override { fired_ = true; }
  bool fired() const { return fired_; }

 private:
  TimePoint at_;
  bool fired_ = false;
};

}  // namespace

AgentRuntime::AgentRuntime(Clock* clock) : loop_(clock), clock_(clock) {}

AgentRuntime::~AgentRuntime() = default;

StatusOr<std::unique_ptr<AgentRuntime>> AgentRuntime::Create(
    const RunSetup& setup, Clock* clock) {
  std::unique_ptr<AgentRuntime> rt(new AgentRuntime(clock));
  K8S_ASSIGN_OR_RETURN(rt->signals_, SignalWatcher::Create());
  K8S_ASSIGN_OR_RETURN(rt->transport_,
                       kube::CurlTransport::Create(setup.cluster, clock));
  rt->transport_->set_request_stall(setup.api_first_answer_timeout);
  rt->client_ =
      std::make_unique<kube::KubeClient>(rt->transport_.get(), setup.cluster);
  rt->connector_ = ssh::NewLibssh2Connector(clock);
  rt->loop_.Add(rt->signals_.get());
  rt->loop_.Add(rt->transport_.get());
  rt->seed_ = static_cast<uint64_t>(::getpid()) * uint64_t{0x9E3779B97F4A7C15} ^
              static_cast<uint64_t>(WallClockMicros());
  K8S_RETURN_IF_ERROR(rt->AwaitCredential(setup.timeout));
  return rt;
}

// Phase 0: the first credential, before any host starts waiting, so that a
// slow plugin is not mistaken for a silent API server (the first-answer
// budget) and its failure is reported once, not once per host. On the loop:
// signals and --timeout end it; the plugin dies with the transport.
Status AgentRuntime::AwaitCredential(Duration timeout) {
  TimePoint start = clock_->Now();
  // No plugin to wait for (a token file, a cached credential): no loop, and
  // --timeout is the hosts' whole.
  {
    StatusOr<bool> in = transport_->CredentialReady(start);
    if (!in.ok() || *in) return in.status();
  }
  WakeAt deadline(Deadline::After(start, timeout).at());
  loop_.Add(&deadline);
  Status answer;
  bool ready = false;
  Status loop = loop_.RunUntil([&] {
    StatusOr<bool> in = transport_->CredentialReady(clock_->Now());
    if (!in.ok()) answer = in.status();
    ready = !in.ok() || *in;
    return ready || deadline.fired() || signals_->received() != 0;
  });
  loop_.Remove(&deadline);
  credential_wait_ = clock_->Now() - start;
  K8S_RETURN_IF_ERROR(loop);
  if (!ready && signals_->received() == 0) {
    return DeadlineExceededError("timed out after " + FormatDuration(timeout) +
                                 " waiting for the API credential: " +
                                 transport_->CredentialWait(clock_->Now()) +
                                 " (raise --timeout, or fix the plugin)");
  }
  return answer;
}

Status AgentRuntime::RunUntil(const std::function<bool()>& done) {
  return loop_.RunUntil([&] { return done() || signals_->received() != 0; });
}

void AgentRuntime::ReleaseApi() {
  if (transport_) loop_.Remove(transport_.get());
  client_.reset();
  transport_.reset();
  // The agent may stay attached for the whole job: give the heap and the
  // start-up's code pages back (idle_memory.h), so an idle agent holds
  // little more than its SSH session.
  ReleasedMemory released = ReleaseStartupMemory();
  LogDebug("advised away " + std::to_string(released.advised_bytes >> 10) +
           " KiB of the binary's clean read-only mappings: the command runs");
}

}  // namespace k8s_agent
