// SPDX-License-Identifier: Apache-2.0
// RunExecPlugin: spawning a credential plugin, bounded in time and output.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/kube/exec_credential.h"

extern char** environ;

namespace k8s_agent::kube {
namespace {

// A credential is a few KiB; more is a confused plugin, not a bigger token.
constexpr size_t kMaxStdout = 1 << 20;
// Only the end of stderr is shown; the rest is dropped as it arrives.
constexpr size_t kStderrTail = 4096;

std::string LastLine(std::string_view text) {
  text = Trim(text);
  size_t nl = text.rfind('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

// The parent's environment minus KUBERNETES_EXEC_INFO, then the stanza's
// `env` (later entries win, as in Go's exec.Cmd), then the protocol's input.
std::vector<std::string> PluginEnv(const ExecConfig& exec,
                                   const std::string& info) {
  std::vector<std::string> out;
  auto drop = [&out](const std::string& name) {
    const std::string prefix = name + "=";
    for (auto it = out.begin(); it != out.end();) {
      it = StartsWith(*it, prefix) ? out.erase(it) : it + 1;
    }
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    out.push_back(*e);
  for (const auto& [name, value] : exec.env) {
    drop(name);
    out.push_back(name + "=" + value);
  }
  drop("KUBERNETES_EXEC_INFO");
  out.push_back("KUBERNETES_EXEC_INFO=" + info);
  return out;
}

struct Spawned {
  pid_t pid = -1;
  UniqueFd out, err;
};

StatusOr<Spawned> Spawn(const std::string& path, const ExecConfig& exec,
                        const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
  UniqueFd err_r(err_pipe[0]), err_w(err_pipe[1]);

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
  // the plugin gets neither, as if started from a shell.
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
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  Spawned s;
  int rc = ::posix_spawn(&s.pid, path.c_str(), &actions, &attr, argv.data(),
                         envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return FailedPreconditionError(
        exec.where + ": exec plugin " + path +
        " could not be started: " + std::strerror(rc));
  }
  s.out = std::move(out_r);
  s.err = std::move(err_r);
  return s;
}

// Reads both pipes until both close or the deadline. Returns false on
// timeout.
bool Drain(Spawned* s, int timeout_seconds, std::string* out, std::string* err,
           bool* too_big) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (s->out.valid() || s->err.valid()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd fds[2] = {{s->out.get(), POLLIN, 0}, {s->err.get(), POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    UniqueFd* owners[2] = {&s->out, &s->err};
    std::string* sinks[2] = {out, err};
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        owners[i]->reset();
        continue;
      }
      sinks[i]->append(buf, static_cast<size_t>(got));
      if (i == 1 && err->size() > 2 * kStderrTail) {
        err->erase(0, err->size() - kStderrTail);
      }
      if (i == 0 && out->size() > kMaxStdout) {
        *too_big = true;
        return true;
      }
    }
  }
  return true;
}

}  // namespace

StatusOr<ExecCredential> RunExecPlugin(const ExecConfig& exec,
                                       const ExecClusterInfo& info,
                                       int timeout_seconds) {
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
  K8S_ASSIGN_OR_RETURN(
      Spawned s, Spawn(path, exec, PluginEnv(exec, ExecInfoJson(exec, info))));
  std::string out, err;
  bool too_big = false;
  bool finished = Drain(&s, timeout_seconds, &out, &err, &too_big);
  if (!finished || too_big) ::kill(s.pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(s.pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string who = exec.where + ": exec plugin " + path;
  if (!finished) {
    return DeadlineExceededError(who + " did not finish within " +
                                 std::to_string(timeout_seconds) +
                                 " s and was killed");
  }
  if (too_big) {
    return FailedPreconditionError(who + " printed more than 1 MiB; killed");
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string how =
        WIFEXITED(wstatus)
            ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
            : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    std::string last = LastLine(err);
    return FailedPreconditionError(
        who + " " + how +
        (last.empty() ? " (no stderr)" : ": \"" + Printable(last) + "\""));
  }
  return ParseExecCredential(out, exec.api_version, path);
}

}  // namespace k8s_agent::kube
