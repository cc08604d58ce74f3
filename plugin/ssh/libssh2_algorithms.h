// SPDX-License-Identifier: Apache-2.0
// The algorithm lists of algorithms.h applied to a libssh2 session.

#ifndef K8S_AGENT_PLUGIN_SSH_LIBSSH2_ALGORITHMS_H_
#define K8S_AGENT_PLUGIN_SSH_LIBSSH2_ALGORITHMS_H_

#include <libssh2.h>

#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/ssh/algorithms.h"

namespace k8s_agent::ssh {

/// The libssh2 preference string: `wanted`, in order, limited to what
/// this libssh2 implements (`supported`). Names libssh2 lacks are dropped
/// (chacha20-poly1305 before 1.11); none left is kFailedPrecondition
/// naming the option and what libssh2 has.
StatusOr<std::string> Libssh2Preference(
    AlgorithmKind kind, const std::vector<std::string>& wanted,
    const std::vector<std::string>& supported);

/// The algorithms of `kind` this libssh2 implements.
std::vector<std::string> SupportedAlgorithms(LIBSSH2_SESSION* session,
                                             AlgorithmKind kind);
/// The same by libssh2 method type (LIBSSH2_METHOD_COMP_SC, ...).
std::vector<std::string> SupportedAlgorithms(LIBSSH2_SESSION* session,
                                             int method_type);

/// Sets kex, cipher and MAC preferences (both directions) on a session
/// before its handshake; host keys: ApplyHostKeyPrefs.
Status ApplyAlgorithmPrefs(LIBSSH2_SESSION* session,
                           const AlgorithmPrefs& prefs);

/// Sets the host key preference: `wanted` (HostKeyAlgorithms) limited to
/// what libssh2 has, the methods for `known_types` first (this host's
/// key types in known_hosts; "ssh-rsa" also means rsa-sha2-512/256), so a
/// known host is not reported unknown because it has several keys.
Status ApplyHostKeyPrefs(LIBSSH2_SESSION* session,
                         const std::vector<std::string>& wanted,
                         const std::vector<std::string>& known_types);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_LIBSSH2_ALGORITHMS_H_
