// SPDX-License-Identifier: Apache-2.0
// The files k8s-agent-sshd writes for a worker: sshd's own config, and the
// ssh client settings that orted on this worker hands to k8s-agent when
// mpirun spawns through it (tree spawn).
#ifndef K8S_AGENT_PLUGIN_SSHD_SSHD_CONFIG_H_
#define K8S_AGENT_PLUGIN_SSHD_SSHD_CONFIG_H_

#include <string>
#include <utility>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::sshd {

struct SshdSettings {
  int port = 2222;
  std::string user;  ///< The one user who may log in.
  std::string host_key_file;
  std::string authorized_keys_file;
  std::string pid_file;
  /// OpenSSH >= 9.8 runs sessions in sshd-session and (10.x) auth in
  /// sshd-auth, at compiled-in paths unless the config names them: set when
  /// they sit beside the sshd that runs. Empty for an older sshd, which
  /// would reject the keywords.
  std::string session_path;
  std::string auth_path;
  std::string log_level = "INFO";
  /// Variables every session gets (SetEnv): sshd hands a non-interactive
  /// session nothing of the container's environment.
  std::vector<std::pair<std::string, std::string>> session_env;
};

/// sshd_config for `s`: key authentication only, for `s.user` only, no
/// forwarding of any kind, no environment accepted from clients. Paths are
/// double-quoted (a space, '#' or '=' in them is theirs) and
/// AuthorizedKeysFile's '%' doubled (sshd expands tokens there); fails on a
/// path CheckConfigPath refuses or a LogLevel sshd does not know.
StatusOr<std::string> RenderSshdConfig(const SshdSettings& s);

/// Whether `level` is one of sshd's LogLevel values (any case).
Status CheckLogLevel(const std::string& level);

/// Whether `path` can be written into sshd_config and the client config so
/// that sshd (any version), ssh and k8s-agent read it back as it is: not
/// with a double quote or backslash (sshd before 8.7 and k8s-agent read no
/// escapes), a control character, or "${" (ssh expands it in IdentityFile).
/// `what` names the path's source in the message (TMPDIR, --run-dir, ...).
Status CheckConfigPath(const std::string& what, const std::string& path);

/// The SetEnv entries for `env`'s names that have a non-empty value; a value
/// sshd_config cannot quote (a double quote or backslash) is left out and
/// named in `skipped`.
std::vector<std::pair<std::string, std::string>> SessionEnvironment(
    const std::vector<std::string>& names,
    const std::vector<std::pair<std::string, std::string>>& env,
    std::vector<std::string>* skipped);

/// Client settings for tree spawn: `identity` and `known_hosts` for every
/// host, on `port`, host keys checked strictly; quoted and escaped as in
/// RenderSshdConfig (ssh and k8s-agent expand '%' in both).
StatusOr<std::string> RenderClientConfig(int port, const std::string& identity,
                                         const std::string& known_hosts);

/// One known_hosts line trusting the job's shared host key `public_key`
/// ("type base64") for any host, bare and on `port`.
std::string RenderKnownHosts(int port, const std::string& public_key);

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_PLUGIN_SSHD_SSHD_CONFIG_H_
