// SPDX-License-Identifier: Apache-2.0
// AgentRuntime: the set-up RunAgent and RunHostfile share.

#include "plugin/agent/agent_runtime.h"

#include <unistd.h>

#include <string>

#include "plugin/agent/idle_memory.h"
#include "plugin/base/log.h"

namespace k8s_agent {

AgentRuntime::AgentRuntime(Clock* clock) : loop_(clock) {}

AgentRuntime::~AgentRuntime() = default;

StatusOr<std::unique_ptr<AgentRuntime>> AgentRuntime::Create(
    const RunSetup& setup, Clock* clock) {
  std::unique_ptr<AgentRuntime> rt(new AgentRuntime(clock));
  K8S_ASSIGN_OR_RETURN(rt->signals_, SignalWatcher::Create());
  K8S_ASSIGN_OR_RETURN(rt->transport_,
                       kube::CurlTransport::Create(setup.cluster, clock));
  rt->client_ =
      std::make_unique<kube::KubeClient>(rt->transport_.get(), setup.cluster);
  rt->connector_ = ssh::NewLibssh2Connector(clock);
  rt->loop_.Add(rt->signals_.get());
  rt->loop_.Add(rt->transport_.get());
  rt->seed_ = static_cast<uint64_t>(::getpid()) * uint64_t{0x9E3779B97F4A7C15} ^
              static_cast<uint64_t>(WallClockMicros());
  return rt;
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
