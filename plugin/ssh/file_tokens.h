// SPDX-License-Identifier: Apache-2.0
// The tokens ssh expands in IdentityFile and UserKnownHostsFile: a leading
// ~, then %-tokens and ${VAR} (ssh.c: tilde_expand_filename, then
// default_client_percent_dollar_expand with sshconnect.h's
// DEFAULT_CLIENT_PERCENT_EXPAND_ARGS).

#ifndef K8S_AGENT_PLUGIN_SSH_FILE_TOKENS_H_
#define K8S_AGENT_PLUGIN_SSH_FILE_TOKENS_H_

#include <functional>
#include <optional>
#include <string>

#include "plugin/base/status.h"

namespace k8s_agent::ssh {

/// What each token stands for, for one destination.
struct FileTokens {
  std::string home;        ///< ~ and %d.
  std::string host;        ///< %h: HostName, expanded, else the host.
  std::string host_arg;    ///< %n: the host as given.
  std::string key_alias;   ///< %k: HostKeyAlias, else the host as given.
  std::string user;        ///< %r: the remote user.
  std::string local_user;  ///< %u.
  std::string local_host;  ///< %l (%L: up to the first dot).
  unsigned uid = 0;        ///< %i.
  int port = 22;           ///< %p.
  /// ${NAME}: the environment; nullopt for an unset variable.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

/// `path` (the value of `keyword`, for errors) with its tokens expanded;
/// an unknown token, %C (not computed here) or an unset ${VAR} is an
/// error naming it.
StatusOr<std::string> ExpandFileTokens(const std::string& keyword,
                                       const std::string& path,
                                       const FileTokens& tokens);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_FILE_TOKENS_H_
