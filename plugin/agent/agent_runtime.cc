// SPDX-License-Identifier: Apache-2.0
// AgentRuntime: the set-up RunAgent and RunHostfile share.

#include "plugin/agent/agent_runtime.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "plugin/agent/idle_memory.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/cache_key.h"
#include "plugin/kube/pod_list_cache.h"

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

// One cache per namespace, keyed by everything that decides what the list
// may show: the server, the namespace and the credential (whichever of its
// forms is configured; a secret only ever enters the key hashed).
kube::SharedLookupTransport::CacheFactory SharedListCaches(
    const kube::ClusterConfig& c, Duration max_age) {
  std::vector<std::string> identity = {
      "pod-list/1",      c.server,       c.source,
      c.token_file,      c.token,        c.client_cert_file,
      c.client_cert_pem, c.exec.command, std::to_string(c.exec.args.size())};
  identity.insert(identity.end(), c.exec.args.begin(), c.exec.args.end());
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = kube::SharedPodListDir(
      c.cache_dir, tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp");
  return [identity, dir, max_age](const std::string& ns) {
    std::vector<std::string> fields = identity;
    fields.push_back(ns);
    return std::make_unique<kube::PodListCache>(
        dir, kube::CacheKey(fields), max_age,
        [] { return WallClockMicros() / 1000; });
  };
}

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
  kube::HttpTransport* api = rt->transport_.get();
  if (setup.lookup_cache > Duration::zero()) {
    rt->shared_lookup_ = std::make_unique<kube::SharedLookupTransport>(
        api, SharedListCaches(setup.cluster, setup.lookup_cache), clock);
    api = rt->shared_lookup_.get();
  }
  rt->client_ = std::make_unique<kube::KubeClient>(api, setup.cluster);
  rt->connector_ = ssh::NewLibssh2Connector(clock);
  rt->loop_.Add(rt->signals_.get());
  rt->loop_.Add(rt->transport_.get());
  if (rt->shared_lookup_) rt->loop_.Add(rt->shared_lookup_.get());
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
  if (shared_lookup_) loop_.Remove(shared_lookup_.get());
  if (transport_) loop_.Remove(transport_.get());
  client_.reset();
  shared_lookup_.reset();
  transport_.reset();
  // The agent may stay attached for the whole job: give the heap and the
  // start-up's code pages back (idle_memory.h), so an idle agent holds
  // little more than its SSH session.
  ReleasedMemory released = ReleaseStartupMemory();
  LogDebug("advised away " + std::to_string(released.advised_bytes >> 10) +
           " KiB of the binary's clean read-only mappings: the command runs");
}

}  // namespace k8s_agent
