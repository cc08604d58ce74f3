// SPDX-License-Identifier: Apache-2.0
// ExecPluginRun: a credential plugin spawned into its own process group,
// bounded in time and output, its pipes read from the event loop.

#include "plugin/kube/exec_plugin.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/client_key_pair.h"
#include "plugin/kube/exec_protocol.h"

extern char** environ;

namespace k8s_agent::kube {
namespace {

// A credential is a few KiB; more is a confused plugin, not a bigger token.
constexpr size_t kMaxStdout = 1 << 20;
// Only the end of stderr is shown; the rest is dropped as it arrives.
constexpr size_t kStderrTail = 4096;
// A plugin that closed its pipes but has not exited yet is looked at again
// after 5 ms, doubling to 200 ms: it exits in microseconds as a rule, and
// there is no fd to wait on for its exit (SIGCHLD is not routed to the loop).
constexpr Duration kFirstReapCheck = milliseconds(5);
constexpr Duration kMaxReapCheck = milliseconds(200);

// client-go's words, so a user searching for them finds the same docs.
constexpr char kInstallHintIntro[] =
    "It looks like you are trying to use a client-go credential plugin that "
    "is not installed. To learn more about this feature, consult the "
    "documentation available at: https://kubernetes.io/docs/reference/"
    "access-authn-authz/authentication/#client-go-credential-plugins";

std::string LastLine(std::string_view text) {
  text = Trim(text);
  size_t nl = text.rfind('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

Status SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return ErrnoError("fcntl(O_NONBLOCK) on a plugin pipe", errno);
  }
  return OkStatus();
}

}  // namespace

std::vector<std::string> ExecPluginEnv(const ExecConfig& exec,
                                       const std::vector<std::string>& parent,
                                       const std::string& exec_info) {
  std::vector<std::string> out = parent;
  auto drop = [&out](const std::string& name) {
    const std::string prefix = name + "=";
    out.erase(std::remove_if(
                  out.begin(), out.end(),
                  [&](const std::string& e) { return StartsWith(e, prefix); }),
              out.end());
  };
  for (const auto& [name, value] : exec.env) {
    drop(name);
    out.push_back(name + "=" + value);
  }
  drop("KUBERNETES_EXEC_INFO");
  out.push_back("KUBERNETES_EXEC_INFO=" + exec_info);
  return out;
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    out.emplace_back(*e);
  }
  return out;
}

StatusOr<std::string> ResolveExecCommand(const ExecConfig& exec,
                                         const std::string& path_env) {
  auto not_found = [&](const std::string& detail) {
    std::string message = exec.where + ": exec plugin command \"" +
                          Printable(exec.command) + "\" " + detail + ". " +
                          kInstallHintIntro;
    if (!exec.install_hint.empty()) {
      message += ". installHint: " + Printable(exec.install_hint, 2048);
    }
    return FailedPreconditionError(message);
  };
  if (exec.command.find('/') != std::string::npos) {
    if (::access(exec.command.c_str(), X_OK) != 0) {
      return not_found("is not an executable file");
    }
    return exec.command;
  }
  for (const std::string& dir : Split(path_env, ':')) {
    // An empty $PATH entry is the current directory, as in execvp.
    std::string candidate = (dir.empty() ? "." : dir) + "/" + exec.command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return not_found("was not found in $PATH");
}

ExecPluginRun::ExecPluginRun(const ExecConfig& exec, std::string path,
                             TimePoint deadline, Duration timeout)
    : exec_(exec),
      path_(std::move(path)),
      who_(exec.where + ": exec plugin " + path_),
      deadline_(deadline),
      timeout_(timeout) {}

StatusOr<std::unique_ptr<ExecPluginRun>> ExecPluginRun::Start(
    const ExecConfig& exec, const std::vector<std::string>& env, TimePoint now,
    Duration timeout) {
  // The agent's $PATH, not the stanza's env: Go's exec.Command looks the
  // name up before the child's environment applies.
  const char* path_env = std::getenv("PATH");
  K8S_ASSIGN_OR_RETURN(std::string path,
                       ResolveExecCommand(exec, path_env ? path_env : ""));
  if (exec.interactive_mode == "Always") {
    return FailedPreconditionError(
        exec.where + ": exec plugin " + path +
        " has interactiveMode Always, but k8s-agent runs it with no "
        "terminal (stdin is /dev/null); set interactiveMode: Never or "
        "IfAvailable if the plugin can work without asking");
  }
  std::unique_ptr<ExecPluginRun> run(
      new ExecPluginRun(exec, path, now + timeout, timeout));
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
  UniqueFd err_r(err_pipe[0]), err_w(err_pipe[1]);
  // Only our ends: the plugin's stdout stays a blocking pipe.
  K8S_RETURN_IF_ERROR(SetNonBlocking(out_r.get()));
  K8S_RETURN_IF_ERROR(SetNonBlocking(err_r.get()));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // stdin /dev/null: the agent is never interactive, and orted's stdin
  // must not be read by a plugin.
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  std::vector<std::string> argv_s = {exec.command};
  argv_s.insert(argv_s.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv, envp;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  for (std::string& e : env_copy) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The agent blocks the signals its signalfd reads and ignores SIGPIPE;
  // the plugin gets neither, as if started from a shell. Its own process
  // group (pgid = its pid) lets one kill() end it and all it started.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
  int rc = ::posix_spawn(&run->pid_, path.c_str(), &actions, &attr, argv.data(),
                         envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    run->pid_ = -1;
    return FailedPreconditionError(
        run->who_ + " could not be started: " + std::strerror(rc));
  }
  LogDebug(run->who_ + " started (pid " + std::to_string(run->pid_) +
           ", killed after " + FormatDuration(timeout) + ")");
  run->out_ = std::move(out_r);
  run->err_ = std::move(err_r);
  return run;
}

ExecPluginRun::~ExecPluginRun() {
  // Teardown before the end (a signal, --timeout): the whole group goes.
  // Once reaped with its pipes closed, the group id may already be reused.
  if (pid_ > 0 && (!reaped_ || out_.valid() || err_.valid())) {
    ::kill(-pid_, SIGKILL);
  }
  if (pid_ > 0 && !reaped_) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

void ExecPluginRun::CollectFds(std::vector<pollfd>* fds) {
  if (done_) return;
  if (out_.valid()) fds->push_back(pollfd{out_.get(), POLLIN, 0});
  if (err_.valid()) fds->push_back(pollfd{err_.get(), POLLIN, 0});
}

TimePoint ExecPluginRun::NextWake() const {
  if (done_) return TimePoint::max();
  return std::min(deadline_, reap_at_);
}

void ExecPluginRun::OnFdReady(int fd, short, TimePoint now) {
  if (done_) return;
  if (fd == out_.get()) Read(&out_, &stdout_, now);
  if (!done_ && fd == err_.get()) Read(&err_, &stderr_, now);
}

void ExecPluginRun::Read(UniqueFd* fd, std::string* sink, TimePoint now) {
  char buf[16384];
  for (;;) {
    ssize_t got = ::read(fd->get(), buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) {
      fd->reset();
      break;
    }
    sink->append(buf, static_cast<size_t>(got));
    if (sink == &stderr_ && stderr_.size() > 2 * kStderrTail) {
      stderr_.erase(0, stderr_.size() - kStderrTail);
    }
    if (sink == &stdout_ && stdout_.size() > kMaxStdout) {
      Abort(FailedPreconditionError(who_ + " printed more than 1 MiB; killed"));
      return;
    }
  }
  if (!out_.valid() && !err_.valid()) {
    reap_every_ = kFirstReapCheck;
    TryReap(now);
  }
}

void ExecPluginRun::OnTimer(TimePoint now) {
  if (done_) return;
  if (now >= deadline_) {
    Abort(DeadlineExceededError(who_ + " did not finish within " +
                                FormatDuration(timeout_) +
                                " and was killed with its process group"));
    return;
  }
  if (now >= reap_at_) TryReap(now);
}

void ExecPluginRun::Abort(Status why) {
  ::kill(-pid_, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  // The group is dead: nobody else can write to the pipes.
  out_.reset();
  err_.reset();
  done_ = true;
  result_ = std::move(why);
}

void ExecPluginRun::TryReap(TimePoint now) {
  int wstatus = 0;
  pid_t got = ::waitpid(pid_, &wstatus, WNOHANG);
  if (got == pid_ || (got < 0 && errno == ECHILD)) {
    reaped_ = true;
    Finish(got == pid_ ? wstatus : 0);
    return;
  }
  reap_at_ = now + reap_every_;
  reap_every_ = std::min(reap_every_ * 2, kMaxReapCheck);
}

void ExecPluginRun::Finish(int wstatus) {
  done_ = true;
  reap_at_ = TimePoint::max();
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string how =
        WIFEXITED(wstatus)
            ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
            : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    std::string last = LastLine(stderr_);
    result_ = FailedPreconditionError(
        who_ + " " + how +
        (last.empty() ? " (no stderr)" : ": \"" + Printable(last) + "\""));
    return;
  }
  result_ = ParseExecCredential(stdout_, exec_.api_version, path_);
  stdout_.clear();  // Held a token.
  if (result_.ok() && !result_->client_cert_pem.empty()) {
    Status pair = CheckClientKeyPair(
        result_->client_cert_pem, result_->client_key_pem,
        who_ + "'s status.clientCertificateData", "its status.clientKeyData");
    if (!pair.ok()) result_ = pair;
  }
}

}  // namespace k8s_agent::kube
