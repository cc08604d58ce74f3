// SPDX-License-Identifier: Apache-2.0
// The remote user and host names ssh accepts from its command line: none
// with shell metacharacters, since they reach %r and %h in Match exec
// (and ssh's ProxyCommand), which a shell runs. OpenSSH's ssh_valid_ruser
// and ssh_valid_hostname (readconf.c; CVE-2023-51385 is that class).

#ifndef K8S_AGENT_PLUGIN_SSH_REMOTE_NAMES_H_
#define K8S_AGENT_PLUGIN_SSH_REMOTE_NAMES_H_

#include <string>

#include "plugin/base/status.h"

namespace k8s_agent::ssh {

/// OK unless `user` starts with '-', holds a control character, one of
/// ' ` " ; & < > | ( ) { }, a '-' after whitespace, or ends with '\'.
/// `from` says where it came from ("-l", "USER@HOST", "-o User", a
/// file:line), for the error.
Status CheckRemoteUser(const std::string& user, const std::string& from);

/// OK unless `host` starts with '-', holds whitespace, a control character
/// or one of ' ` " $ \ ; & < > | ( ) { } ,.
Status CheckRemoteHost(const std::string& host, const std::string& from);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_REMOTE_NAMES_H_
