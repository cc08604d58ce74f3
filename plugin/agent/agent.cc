// SPDX-License-Identifier: Apache-2.0
// RunAgent: one loop from pod lookup to remote exit.

#include "plugin/agent/agent.h"

#include <signal.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin/agent/host_waiter.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

const char* SignalName(int signo) {
  switch (signo) {
    case SIGINT:
      return "INT";
    case SIGTERM:
      return "TERM";
    case SIGHUP:
      return "HUP";
    case SIGQUIT:
      return "QUIT";
    default:
      return "TERM";
  }
}

// Forwards the first termination signal the agent receives to the remote
// command, once, in the loop iteration that read it from the signalfd. The
// exec channel owns everything after that (the one grace timer, giving up
// on a command that ignores the signal), so the loop's condition is only
// "the connection ended".
class SignalForwarder : public Pollable {
 public:
  SignalForwarder(const SignalWatcher* signals, ssh::SshConnection* conn,
                  std::string host)
      : signals_(signals), conn_(conn), host_(std::move(host)) {}
  int forwarded() const { return forwarded_; }

  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override {
    return signals_->received() != 0 && !handled_ ? TimePoint::min()
                                                  : TimePoint::max();
  }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override {
    handled_ = true;
    // Ended in the same iteration: its own status is the answer.
    if (conn_->state() != ssh::SshConnection::State::kRunning) return;
    forwarded_ = signals_->received();
    LogInfo(host_ + ": forwarding SIG" + SignalName(forwarded_) +
            " to the remote command");
    conn_->Signal(SignalName(forwarded_));
  }

 private:
  const SignalWatcher* signals_;
  ssh::SshConnection* conn_;
  std::string host_;
  bool handled_ = false;
  int forwarded_ = 0;
};

// The wait for one host, from the shared set-up, the host's name and its
// ssh settings.
WaitPolicy PolicyFor(const AgentConfig& config, const HostName& name,
                     ssh::ResolvedSshOptions ssh, Duration spent) {
  WaitPolicy policy;
  policy.ns = config.setup.ns;
  // A cluster DNS name carries its namespace unless one was configured.
  if (policy.ns.empty()) policy.ns = name.ns;
  if (policy.ns.empty()) policy.ns = config.setup.cluster.ns;
  policy.label_selector = config.setup.label_selector;
  // The first credential's wait (an exec plugin) counted against it.
  policy.timeout = std::max(config.setup.timeout - spent, Duration::zero());
  policy.api_first_answer_timeout = config.setup.api_first_answer_timeout;
  policy.watch_idle_timeout = config.setup.watch_idle_timeout;
  policy.require_ready = config.require_ready;
  policy.fatal_reasons = config.fatal_reasons;
  policy.ssh = std::move(ssh);
  return policy;
}

using Waiters = std::vector<std::unique_ptr<HostWaiter>>;

// A waiter per host, each with its own ssh settings (Host and Match
// blocks); HostName, when set, is the name looked up instead of the host,
// as ssh connects to it. `no_stdin`: some host's settings say -n.
StatusOr<Waiters> MakeWaiters(const AgentConfig& config, AgentRuntime* rt,
                              Clock* clock, Tracer* tracer, bool* no_stdin) {
  Waiters waiters;
  for (const std::string& host : config.hosts) {
    ssh::ResolvedSshOptions ssh;
    ssh.hostname = ssh.host_key_alias = host;
    if (config.setup.ssh_for) {
      K8S_ASSIGN_OR_RETURN(ssh, config.setup.ssh_for(host));
    }
    StatusOr<HostName> name = ParseHostName(ssh.hostname);
    if (!name.ok()) return name.status();
    name->original = host;
    *no_stdin = *no_stdin || ssh.no_stdin;
    waiters.push_back(std::make_unique<HostWaiter>(
        *name, PolicyFor(config, *name, std::move(ssh), rt->credential_wait()),
        rt->client(), rt->connector(), clock, tracer,
        rt->seed() + 7 * waiters.size()));
  }
  return waiters;
}

// --wait-only: each host's outcome logged, and the count that failed.
StatusOr<AgentResult> WaitOnlyResult(const AgentConfig& config,
                                     const Waiters& waiters) {
  int failed = 0;
  for (size_t i = 0; i < waiters.size(); ++i) {
    if (waiters[i]->state() == HostWaiter::State::kFailed) {
      ++failed;
      LogError(config.hosts[i] + ": " + waiters[i]->status().message());
    } else {
      LogInfo(config.hosts[i] + ": ready");
    }
  }
  if (failed > 0) {
    return FailedPreconditionError(std::to_string(failed) + " of " +
                                   std::to_string(waiters.size()) +
                                   " host(s) did not become ready");
  }
  return AgentResult();
}

// How the command ended (`forwarded`: the signal passed on to it, if any),
// traced and turned into the agent's result.
StatusOr<AgentResult> CommandOutcome(const std::string& host,
                                     const std::string& pod,
                                     const std::string& ip,
                                     const ssh::SshConnection& conn,
                                     int forwarded, Tracer* tracer) {
  AgentResult result;
  if (forwarded != 0) {
    result.local_signal = forwarded;
    tracer->Record(host, pod, "exited",
                   std::string("signal ") + SignalName(forwarded));
    return result;
  }
  if (conn.state() == ssh::SshConnection::State::kFailed) {
    tracer->Record(host, pod, "failed", conn.status().message());
    return conn.status().WithContext("connection to pod " + pod + " at " + ip);
  }
  const ssh::ExitResult& exit = conn.exit_result();
  if (!exit.local_error.empty()) {
    tracer->Record(host, pod, "failed", exit.local_error);
    return Status(Code::kCancelled, "stopped the remote command on pod " + pod +
                                        ": " + exit.local_error);
  }
  result.exit_code = exit.exit_status;
  result.remote_signal = exit.signal;
  tracer->Record(host, pod, "exited",
                 exit.signal.empty()
                     ? "status " + std::to_string(exit.exit_status)
                     : "signal " + exit.signal);
  return result;
}

// Phase 2: runs the command on the connection that proved readiness, until
// it ends, forwarding the first termination signal to it.
StatusOr<AgentResult> RunCommand(const AgentConfig& config, AgentRuntime* rt,
                                 Tracer* tracer,
                                 std::unique_ptr<ssh::SshConnection> conn,
                                 const std::string& pod, const std::string& ip,
                                 bool no_stdin) {
  ssh::StdioFds stdio;
  if (no_stdin) stdio.in = -1;
  Status exec = conn->Exec(config.command, stdio);
  if (!exec.ok()) return exec.WithContext("starting the command on pod " + pod);
  rt->loop()->Add(conn.get());

  SignalForwarder forwarder(&rt->signals(), conn.get(), config.hosts[0]);
  rt->loop()->Add(&forwarder);
  auto ended = [&] {
    auto s = conn->state();
    return s == ssh::SshConnection::State::kExited ||
           s == ssh::SshConnection::State::kFailed;
  };
  K8S_RETURN_IF_ERROR(
      rt->loop()->RunUntil([&] { return conn->command_started() || ended(); }));
  if (conn->command_started()) {
    tracer->Record(config.hosts[0], pod, "started", ip);
    // The agent may stay attached for the whole job (tree spawn). Released
    // only now, while the command runs: it is off the launch's critical
    // path, and the code that opened the session is not needed again. Not
    // for a command that already ended: the agent is about to exit.
    if (!ended()) rt->ReleaseApi();
  }
  K8S_RETURN_IF_ERROR(rt->loop()->RunUntil(ended));
  return CommandOutcome(config.hosts[0], pod, ip, *conn, forwarder.forwarded(),
                        tracer);
}

}  // namespace

int SignalNumber(const std::string& name) {
  static const struct {
    const char* name;
    int number;
  } kSignals[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},
                  {"ILL", SIGILL},   {"ABRT", SIGABRT}, {"FPE", SIGFPE},
                  {"KILL", SIGKILL}, {"SEGV", SIGSEGV}, {"PIPE", SIGPIPE},
                  {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
                  {"USR2", SIGUSR2}, {"BUS", SIGBUS}};
  for (const auto& s : kSignals) {
    if (name == s.name) return s.number;
  }
  return 0;
}

StatusOr<AgentResult> RunAgent(const AgentConfig& config) {
  Clock* clock = RealClock::Get();
  K8S_ASSIGN_OR_RETURN(Tracer tracer, Tracer::Open(config.trace_file, clock));
  K8S_ASSIGN_OR_RETURN(std::unique_ptr<AgentRuntime> rt,
                       AgentRuntime::Create(config.setup, clock));

  // Phase 1: every host ready (one in exec mode).
  bool no_stdin = false;
  K8S_ASSIGN_OR_RETURN(Waiters waiters, MakeWaiters(config, rt.get(), clock,
                                                    &tracer, &no_stdin));
  for (auto& w : waiters) {
    rt->loop()->Add(w.get());
    w->Start(clock->Now());
  }
  auto all_done = [&] {
    for (auto& w : waiters) {
      if (!w->done()) return false;
    }
    return true;
  };
  K8S_RETURN_IF_ERROR(rt->RunUntil(all_done));
  if (rt->signals().received() != 0) {
    AgentResult r;
    r.local_signal = rt->signals().received();
    return r;
  }
  LogDebug("API requests: " + std::to_string(rt->client()->requests()));
  if (config.wait_only) return WaitOnlyResult(config, waiters);

  HostWaiter& waiter = *waiters[0];
  if (waiter.state() == HostWaiter::State::kFailed) return waiter.status();
  std::unique_ptr<ssh::SshConnection> conn = waiter.TakeConnection();
  std::string pod = waiter.pod_name();
  std::string ip = waiter.pod_ip();
  for (auto& w : waiters) rt->loop()->Remove(w.get());
  waiters.clear();  // Cancels any API call still open: none after launch.
  return RunCommand(config, rt.get(), &tracer, std::move(conn), pod, ip,
                    no_stdin);
}

}  // namespace k8s_agent
