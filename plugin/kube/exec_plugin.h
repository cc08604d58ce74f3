// SPDX-License-Identifier: Apache-2.0
// Running a credential plugin off the loop: a child in its own process
// group whose pipes join the poll set.

#ifndef K8S_AGENT_PLUGIN_KUBE_EXEC_PLUGIN_H_
#define K8S_AGENT_PLUGIN_KUBE_EXEC_PLUGIN_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/event_loop.h"
#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"
#include "plugin/kube/exec_credential.h"

namespace k8s_agent::kube {

/// One run of a plugin, driven by the event loop. Abstract so that
/// ExecCredentialSource's tests script runs that end when the test says.
class ExecRun : public Pollable {
 public:
  /// The answer is in: result() may be read.
  virtual bool done() const = 0;
  /// The credential, or why there is none (the plugin's exit, its stderr's
  /// last line, a timeout). Only once done().
  virtual const StatusOr<ExecCredential>& result() const = 0;
};

/// The environment a plugin gets: `parent` (the agent's, NAME=VALUE) minus
/// KUBERNETES_EXEC_INFO, then the stanza's `env` (later entries win, as in
/// Go's exec.Cmd), then KUBERNETES_EXEC_INFO=`exec_info`.
std::vector<std::string> ExecPluginEnv(const ExecConfig& exec,
                                       const std::vector<std::string>& parent,
                                       const std::string& exec_info);

/// The agent's own environment, as NAME=VALUE strings.
std::vector<std::string> ProcessEnvironment();

/// The executable to run: `command` itself when it holds a slash, else the
/// first match in `path_env` ($PATH). kFailedPrecondition names the
/// command and shows the installHint when there is none.
StatusOr<std::string> ResolveExecCommand(const ExecConfig& exec,
                                         const std::string& path_env);

/// The real run: stdin /dev/null, stdout and stderr pipes read as the loop
/// finds them readable, in a process group of its own so that whatever it
/// starts dies with it. The group is killed (SIGKILL) when the run takes
/// longer than its timeout, prints more than 1 MiB, or is destroyed before
/// it ended (the agent stops: a signal, --timeout). Nothing here blocks but
/// the reaping of a child that was just sent SIGKILL.
class ExecPluginRun : public ExecRun {
 public:
  /// Resolves the command (the agent's $PATH), refuses interactiveMode Always
  /// and spawns it with `env`. Errors name the plugin and `exec.where`.
  static StatusOr<std::unique_ptr<ExecPluginRun>> Start(
      const ExecConfig& exec, const std::vector<std::string>& env,
      TimePoint now, Duration timeout = seconds(kExecTimeoutSeconds));
  ~ExecPluginRun() override;
  ExecPluginRun(const ExecPluginRun&) = delete;
  ExecPluginRun& operator=(const ExecPluginRun&) = delete;

  bool done() const override { return done_; }
  const StatusOr<ExecCredential>& result() const override { return result_; }
  /// The plugin's pid, also its process group's id (tests).
  pid_t pid() const { return pid_; }

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

 private:
  ExecPluginRun(const ExecConfig& exec, std::string path, TimePoint deadline,
                Duration timeout);
  void Read(UniqueFd* fd, std::string* sink, TimePoint now);
  // Kills the group and reaps the plugin; `why` becomes the result.
  void Abort(Status why);
  // Both pipes are closed: reap the plugin if it exited, else look again.
  void TryReap(TimePoint now);
  void Finish(int wstatus);

  ExecConfig exec_;
  std::string path_;  // The resolved executable, for messages.
  std::string who_;   // "FILE: user \"u\": exec plugin PATH".
  TimePoint deadline_;
  Duration timeout_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  UniqueFd out_, err_;
  std::string stdout_, stderr_;
  TimePoint reap_at_ = TimePoint::max();
  Duration reap_every_{};
  bool done_ = false;
  StatusOr<ExecCredential> result_ =
      InternalError("the plugin is still running");
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_EXEC_PLUGIN_H_
