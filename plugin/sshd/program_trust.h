// SPDX-License-Identifier: Apache-2.0
// Whether the session user could replace a program that root runs: sshd
// execs sshd-session (and sshd-auth) for every connection, and a restarted
// container runs k8s-agent-sshd and sshd again. A delivery emptyDir is
// mode 0777 unless mounted read-only in the worker container.
#ifndef K8S_AGENT_PLUGIN_SSHD_PROGRAM_TRUST_H_
#define K8S_AGENT_PLUGIN_SSHD_PROGRAM_TRUST_H_

#include <string>
#include <vector>

#include "plugin/sshd/session_user.h"

namespace k8s_agent::sshd {

/// A warning naming the first of `programs` that `user` could replace or
/// change (the file is theirs or writable by group or others, or its
/// directory lets them rename it away), unless it sits on a read-only
/// mount; empty when none, or when `user` is this process's own uid.
std::string ReplaceableProgramWarning(const std::vector<std::string>& programs,
                                      const SessionUser& user);

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_PLUGIN_SSHD_PROGRAM_TRUST_H_
