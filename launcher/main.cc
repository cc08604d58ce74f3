// SPDX-License-Identifier: Apache-2.0
// k8s-agent: parse the ssh-style command line, run the agent, map the
// outcome to an exit status the way ssh(1) does.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "launcher/options.h"
#include "launcher/report_main.h"
#include "plugin/agent/agent.h"
#include "plugin/agent/hostfile.h"
#include "plugin/agent/linked_libraries.h"
#include "plugin/base/core_dumps.h"
#include "plugin/base/home_dir.h"
#include "plugin/base/log.h"
#include "plugin/base/std_fds.h"
#include "plugin/base/strings.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/ssh/ssh_options.h"

extern char** environ;

namespace k8s_agent {
namespace {

// ssh(1): "exits with the exit status of the remote command or with 255
// if an error occurred". Open MPI treats any non-zero as a failed daemon.
constexpr int kAgentFailure = 255;

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

void PrintOut(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// --hostfile: stdout carries the hostfile and nothing else.
int HostfileMain(const Options& options, RunSetup setup) {
  HostfileRun run;
  run.setup = std::move(setup);
  run.options.format = options.format == OutputFormat::kHorovod
                           ? HostfileFormat::kHorovod
                           : HostfileFormat::kOpenMpi;
  run.options.slots = options.slots;
  run.options.slots_from_resource = options.slots_from_resource;
  run.options.ssh_ready = options.ssh_ready;
  run.options.wait_for_count = options.wait_for_count;
  StatusOr<HostfileResult> result = RunHostfile(run);
  if (!result.ok()) {
    LogError("--hostfile: " + result.status().message());
    return kAgentFailure;
  }
  if (result->local_signal != 0) {
    LogError("--hostfile: interrupted by signal " +
             std::to_string(result->local_signal));
    return 128 + result->local_signal;
  }
  PrintOut(result->text);
  return 0;
}

// A failure of the agent about `about` (a host, or the mode): said, and
// ssh's exit status for it.
int Fail(const std::string& about, const Status& status) {
  LogError(about + ": " + status.message());
  return kAgentFailure;
}

// -E (ssh's: appended, and kept open for the whole run), -q and -v.
Status SetUpLogging(const Options& options) {
  if (!options.log_file.empty()) {
    int fd = ::open(options.log_file.c_str(),
                    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return InvalidArgumentError("-E " + options.log_file + ": " +
                                  std::strerror(errno) +
                                  " (use a writable file)");
    }
    SetLogFd(fd);
  }
  if (options.quiet) SetLogLevel(LogLevel::kError);
  if (options.verbosity >= 1) SetLogLevel(LogLevel::kInfo);
  if (options.verbosity >= 2) SetLogLevel(LogLevel::kDebug);
  return OkStatus();
}

// The settings every mode shares, once.
RunSetup SharedSetup(const Options& options, kube::ClusterConfig cluster,
                     ssh::SshSettingsFor ssh_for) {
  RunSetup setup;
  setup.cluster = std::move(cluster);
  setup.ssh_for = std::move(ssh_for);
  setup.ns = options.cluster.ns;
  setup.label_selector = options.selector;
  setup.timeout = options.timeout;
  setup.api_first_answer_timeout = options.api_first_answer_timeout;
  setup.watch_idle_timeout = options.watch_idle_timeout;
  return setup;
}

// Exec mode and --wait-only: runs the agent and gives the exit status ssh
// would. `host` is what a failure is about (see Main).
int AgentMain(const Options& options, RunSetup setup, const std::string& host) {
  AgentConfig config;
  config.setup = std::move(setup);
  config.hosts = options.hosts;
  config.wait_only = options.wait_only;
  config.command = options.command;
  config.require_ready = options.wait_for == WaitFor::kReady;
  config.fatal_reasons = options.fail_on_reasons;
  config.trace_file = options.trace_file;

  StatusOr<AgentResult> result = RunAgent(config);
  if (!result.ok()) return Fail(host, result.status());
  if (result->local_signal != 0) {
    LogError(host + ": interrupted by signal " +
             std::to_string(result->local_signal));
    return 128 + result->local_signal;
  }
  if (!result->remote_signal.empty()) {
    int signo = SignalNumber(result->remote_signal);
    LogError(host + ": remote command killed by signal " +
             result->remote_signal);
    return signo != 0 ? 128 + signo : kAgentFailure;
  }
  return result->exit_code;
}

int Main(int argc, char** argv) {
  std::map<std::string, std::string> env = Environment();
  std::vector<std::string> args(argv + 1, argv + argc);
  StatusOr<Options> parsed = ParseOptions(
      args, env,
      [](const std::string& path) { return ReadFileToString(path, 1 << 20); });
  if (!parsed.ok()) {
    std::string message = parsed.status().message();
    if (message.find("--help") == std::string::npos) {
      message += " (see k8s-agent --help)";
    }
    LogError(message);
    return kAgentFailure;
  }
  const Options& options = *parsed;
  if (options.help) {
    PrintOut(UsageText());
    return 0;
  }
  if (options.version) {
    PrintOut(VersionText() + "linked: " + LinkedLibraries() + "\n");
    return 0;
  }
  if (Status logging = SetUpLogging(options); !logging.ok()) {
    LogError(logging.message());
    return kAgentFailure;
  }
  for (const std::string& note : options.notes) LogDebug(note);
  // Reading traces needs no cluster: answer before looking for one.
  if (options.report) return ReportMain(options);

  // What a failure is about: the host, or the mode when the run spans
  // hosts (--wait-only has already named each failed host on its line,
  // and its summary belongs to none of them).
  const std::string host = options.hostfile    ? "--hostfile"
                           : options.wait_only ? "--wait-only"
                                               : options.host;
  kube::InClusterSource in_cluster;
  in_cluster.env = env;
  StatusOr<kube::ClusterConfig> cluster =
      kube::LoadClusterConfig(options.cluster, in_cluster);
  if (!cluster.ok()) {
    return Fail(host,
                cluster.status().WithContext("finding the Kubernetes API"));
  }
  auto home = env.find("HOME");
  ssh::SshSettingsFor ssh_for = SshSettingsFromOptions(
      options,
      ssh::SystemConfigEnv(HomeDir(home == env.end() ? "" : home->second)));
  // A bad ssh_config fails before any API request, for every named host
  // (--hostfile reads it for each pod it finds).
  for (const std::string& h : options.hosts) {
    StatusOr<ssh::ResolvedSshOptions> ssh = ssh_for(h);
    if (!ssh.ok()) return Fail(h, ssh.status());
  }
  RunSetup setup =
      SharedSetup(options, std::move(*cluster), std::move(ssh_for));
  if (options.hostfile) return HostfileMain(options, std::move(setup));
  return AgentMain(options, std::move(setup), host);
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) {
  // Before anything opens an fd (stdio, config files, the trace).
  k8s_agent::Status fds = k8s_agent::EnsureStdFdsOpen();
  if (!fds.ok()) {
    k8s_agent::LogError(fds.message());
    return 255;
  }
  // Before the key or the token is read: a core file would hold both.
  k8s_agent::Status no_core = k8s_agent::DisableCoreDumps();
  if (!no_core.ok()) {
    k8s_agent::LogError(no_core.message());
    return 255;
  }
  try {
    return k8s_agent::Main(argc, argv);
  } catch (const std::exception& e) {
    // Our code does not throw; this is the last resort for the standard
    // library (e.g. bad_alloc), so the caller still sees an ssh-like 255.
    k8s_agent::LogError(std::string("internal error: ") + e.what());
    return 255;
  }
}
