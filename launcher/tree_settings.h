// SPDX-License-Identifier: Apache-2.0
// The settings one k8s-agent hands to the agents that a launch tree's
// daemons start from the host it launched on.
//
// Why. Under tree spawn (Open MPI 4's orted, Open MPI 5's and 6's prted
// with more hosts than the radix) the daemon on a worker runs the agent for
// the next level. That agent gets only what the daemon forwards, and
// neither forwards it whole: PRRTE through 3.0.14 and 4.1 cuts every
// PRTE_MCA_* value at its first '=' when it copies it onto a child prted's
// command line, so "-o UserKnownHostsFile=/k -o ConnectionAttempts=10"
// arrives as "-o UserKnownHostsFile"; and an sshd session carries none of
// the container's environment (KUBERNETES_SERVICE_*, K8S_AGENT_*). So the
// agent that launches a tree daemon puts its own option words and its
// settings' environment in K8S_AGENT_TREE, exported by the remote command
// itself (any sshd passes the command; few accept environment requests),
// and the agent a daemon starts completes what it was given from them.

#ifndef K8S_AGENT_LAUNCHER_TREE_SETTINGS_H_
#define K8S_AGENT_LAUNCHER_TREE_SETTINGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent {

/// The variable that carries TreeSettings (base64 of JSON: shell-safe
/// unquoted in sh and csh).
inline constexpr char kTreeSettingsEnv[] = "K8S_AGENT_TREE";
/// The variable that names the launching session's stderr (see
/// TreeLaunchCommand), so that a failing agent further down the tree can
/// be heard although the daemon pointed its stderr at /dev/null.
inline constexpr char kTreeReportEnv[] = "K8S_AGENT_TREE_REPORT";
/// The descriptor that holds that stderr in the daemon (one digit: the
/// highest that every POSIX shell's redirection syntax takes).
inline constexpr int kTreeReportFd = 9;

/// What the agent that launched a tree daemon had.
struct TreeSettings {
  /// That agent's level: 1 for the agent mpirun started, 2 for one that a
  /// worker's daemon started, ...
  int level = 1;
  /// The host it launched the daemon on: where the next agents run.
  std::string via;
  /// Its option words (everything before the command but HOST), as it
  /// received them or completed them.
  std::vector<std::string> args;
  /// Its K8S_AGENT_* and KUBERNETES_SERVICE_* environment.
  std::map<std::string, std::string> env;

  std::string Encode() const;
  /// kInvalidArgument for anything Encode did not write.
  static StatusOr<TreeSettings> Decode(std::string_view text);
};

/// True when the command starts a daemon of a launch tree: orted and prted
/// are both given "--tree-spawn" then, and only then will they run agents.
bool IsTreeLaunch(const std::vector<std::string>& words);

/// The environment a tree hands down: K8S_AGENT_* (but the tree's own
/// variables) and KUBERNETES_SERVICE_HOST/_PORT. No token: a worker's agent
/// reads its own pod's service account.
std::map<std::string, std::string> TreeEnvironment(
    const std::map<std::string, std::string>& env);

/// True for the variables that name a file of the pod they were set in
/// (K8S_AGENT_CONFIG and every FILE option's K8S_AGENT_* spelling): a tree
/// hands them to another pod only where that file exists too.
bool IsFileSetting(const std::string& name);

/// The command for the remote login shell: `command` after the lines that
/// export `settings` and keep the session's stderr open on kTreeReportFd
/// with its identity in kTreeReportEnv, and that say so on stderr when the
/// agent the daemon will run (named in `words`, the command's words) is not
/// on the pod. sh syntax, or csh's (settings only) when the daemon's command
/// is written for csh, as Open MPI writes it for a csh login shell.
std::string TreeLaunchCommand(const std::string& command,
                              const std::vector<std::string>& words,
                              const TreeSettings& settings);

/// `args` (an agent's argv[1..]) with its leading option words replaced by
/// `tree_args` when they are a cut-down copy of them: each word equal to
/// the next of `tree_args`, or cut at one of its '=' (after which the rest
/// of that value's words may be missing), words of `tree_args` missing
/// anywhere. The first word that fits nowhere (HOST) and all after it are
/// kept. Returns `args` unchanged when they hold no such copy or already
/// all of it: nothing is guessed.
std::vector<std::string> CompleteFromTree(
    const std::vector<std::string>& args,
    const std::vector<std::string>& tree_args);

}  // namespace k8s_agent

#endif  // K8S_AGENT_LAUNCHER_TREE_SETTINGS_H_
