// SPDX-License-Identifier: Apache-2.0
// k8s-agent: parse the ssh-style command line, run the agent, map the
// outcome to an exit status the way ssh(1) does.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "launcher/inject_dispatch.h"
#include "launcher/options.h"
#include "launcher/report_main.h"
#include "launcher/tree_settings.h"
#include "plugin/agent/agent.h"
#include "plugin/agent/hostfile.h"
#include "plugin/agent/linked_libraries.h"
#include "plugin/agent/openssl_setup.h"
#include "plugin/base/core_dumps.h"
#include "plugin/base/exit_status.h"
#include "plugin/base/home_dir.h"
#include "plugin/base/log.h"
#include "plugin/base/std_fds.h"
#include "plugin/base/strings.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/ssh/ssh_options.h"

extern char** environ;

namespace k8s_agent {
namespace {

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
    return kFailureExit;
  }
  if (result->local_signal != 0) {
    LogError("--hostfile: interrupted by signal " +
             std::to_string(result->local_signal));
    return 128 + result->local_signal;
  }
  PrintOut(result->text);
  return 0;
}

// stderr for an agent that a tree daemon started with its stderr on
// /dev/null, as prted does: the launching session's stderr, which the
// daemon holds on kTreeReportFd, if it is still the pipe that the session
// named (tree_settings.h). Then this agent's lines and the stderr of the
// daemon it starts reach the launcher's output, level by level, as the
// first level's do. Left alone when stderr goes anywhere else
// (--debug-daemons keeps it).
bool ReconnectTreeStderr(const std::map<std::string, std::string>& env) {
  auto named = env.find(kTreeReportEnv);
  if (named == env.end() || named->second.empty()) return false;
  struct stat err {};
  struct stat null {};
  if (::fstat(2, &err) != 0 || ::stat("/dev/null", &null) != 0 ||
      !S_ISCHR(err.st_mode) || err.st_rdev != null.st_rdev) {
    return false;
  }
  const std::string path = "/proc/" + std::to_string(::getppid()) + "/fd/" +
                           std::to_string(kTreeReportFd);
  char link[256];
  ssize_t n = ::readlink(path.c_str(), link, sizeof(link));
  if (n <= 0 || std::string(link, static_cast<size_t>(n)) != named->second) {
    return false;
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::dup2(fd, 2) == 2;
  ::close(fd);
  return ok;
}

// A failing agent down a tree races the daemons' own abort: its prted
// reports the failure to mpirun at once, over PRRTE's connections, while
// the agent's line still crosses one SSH session per level. Before it
// exits it waits (up to 1 s) until the session has read the line, and a
// moment more for the levels above to relay it.
void LingerForTreeReport() {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  int unread = 0;
  while (::ioctl(2, FIONREAD, &unread) == 0 && unread > 0 &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

// An agent that a launch tree's daemon started (its command starts the
// next daemon, and the agent that launched this one left its settings):
// completes argv and the environment from them, and names the agent's
// place in the tree on its lines. Returns this agent's level (1: started
// by mpirun), in *note what was completed, in *reconnected whether its
// stderr now goes up the tree.
int JoinLaunchTree(std::vector<std::string>* args,
                   std::map<std::string, std::string>* env, std::string* note,
                   bool* reconnected) {
  auto it = env->find(kTreeSettingsEnv);
  if (it == env->end() || it->second.empty() || !IsTreeLaunch(*args)) {
    return 1;
  }
  StatusOr<TreeSettings> parent = TreeSettings::Decode(it->second);
  if (!parent.ok()) {
    LogWarning(std::string("ignoring ") + kTreeSettingsEnv + ": " +
               parent.status().message() +
               " (it is k8s-agent's own; unset it if set by hand)");
    return 1;
  }
  const int level = parent->level + 1;
  SetLogOrigin("tree level " + std::to_string(level) + ", on " +
               (parent->via.empty() ? "a worker" : parent->via));
  *reconnected = ReconnectTreeStderr(*env);
  std::vector<std::string> completed = CompleteFromTree(*args, parent->args);
  if (completed != *args) {
    *note = "completed the options a launch tree daemon passed (\"" +
            Join(*args, " ") + "\") from the level " +
            std::to_string(parent->level) + " agent's";
    *args = std::move(completed);
  }
  // The pod's own settings win; the tree fills in what the session lacks,
  // but a file of the launching pod (a generated ssh_config, a trace) only
  // where this pod has it too.
  for (const auto& [name, value] : parent->env) {
    if (env->count(name) != 0) continue;
    if (IsFileSetting(name) && ::access(value.c_str(), F_OK) != 0) {
      *note += std::string(note->empty() ? "" : "; ") + "not taking " + name +
               "=" + value + " from the level " +
               std::to_string(parent->level) + " agent: no such file here";
      continue;
    }
    env->emplace(name, value);
  }
  return level;
}

// A failure of the agent about `about` (a host, or the mode): said, and
// ssh's exit status for it.
int Fail(const std::string& about, const Status& status) {
  LogError(about + ": " + status.message());
  return kFailureExit;
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
  if (options.verbosity >= 1) {
    SetLogLevel(LogLevel::kInfo);
    SetLogTimestamps(true);  // -v lines say when, beside pod events.
  }
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
  setup.lookup_cache = options.lookup_cache;
  return setup;
}

// Exec mode and --wait-only: runs the agent and gives the exit status ssh
// would. `host` is what a failure is about (see Main).
int AgentMain(const Options& options, RunSetup setup, const std::string& host,
              std::string command) {
  AgentConfig config;
  config.setup = std::move(setup);
  config.hosts = options.hosts;
  config.wait_only = options.wait_only;
  config.command = std::move(command);
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
    return signo != 0 ? 128 + signo : kFailureExit;
  }
  return result->exit_code;
}

// Everything after the launch tree's completion: `tree_level` is this
// agent's level in it, `tree_note` what was completed.
int Run(const std::vector<std::string>& args,
        const std::map<std::string, std::string>& env, int tree_level,
        const std::string& tree_note) {
  StatusOr<Options> parsed = ParseOptions(
      args, env,
      [](const std::string& path) { return ReadFileToString(path, 1 << 20); });
  if (!parsed.ok()) {
    std::string message = parsed.status().message();
    if (message.find("--help") == std::string::npos) {
      message += " (see k8s-agent --help)";
    }
    LogError(message);
    return kFailureExit;
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
    return kFailureExit;
  }
  if (!tree_note.empty()) LogDebug(tree_note);
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
  std::string command = options.command;
  if (IsTreeLaunch(options.command_words)) {
    TreeSettings down;
    down.level = tree_level;
    down.via = options.host;
    down.args = options.option_words;
    down.env = TreeEnvironment(env);
    command = TreeLaunchCommand(command, options.command_words, down);
  }
  return AgentMain(options, std::move(setup), host, std::move(command));
}

int Main(int argc, char** argv) {
  std::map<std::string, std::string> env = Environment();
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string tree_note;
  bool tree_stderr = false;
  const int tree_level = JoinLaunchTree(&args, &env, &tree_note, &tree_stderr);
  const int code = Run(args, env, tree_level, tree_note);
  if (code == kFailureExit && tree_stderr) LingerForTreeReport();
  return code;
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) {
  // `k8s-agent inject`: another program (inject_dispatch.cc says why).
  if (k8s_agent::IsInjectCommand(argc, argv)) {
    return k8s_agent::ExecInject(argv);
  }
  // Before anything opens an fd (stdio, config files, the trace).
  k8s_agent::Status fds = k8s_agent::EnsureStdFdsOpen();
  if (!fds.ok()) {
    k8s_agent::LogError(fds.message());
    return k8s_agent::kFailureExit;
  }
  // Before the key or the token is read: a core file would hold both.
  k8s_agent::Status no_core = k8s_agent::DisableCoreDumps();
  if (!no_core.ok()) {
    k8s_agent::LogError(no_core.message());
    return k8s_agent::kFailureExit;
  }
  // Before TLS or SSH uses OpenSSL (openssl_setup.h says why).
  k8s_agent::SetUpOpenSsl();
  try {
    return k8s_agent::Main(argc, argv);
  } catch (const std::exception& e) {
    // Our code does not throw; this is the last resort for the standard
    // library (e.g. bad_alloc), so the caller still sees an ssh-like 255.
    k8s_agent::LogError(std::string("internal error: ") + e.what());
    return k8s_agent::kFailureExit;
  }
}
