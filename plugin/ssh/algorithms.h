// SPDX-License-Identifier: Apache-2.0
// Which key exchange, cipher, MAC and host key algorithms are offered:
// OpenSSH 9's client defaults, changed by ssh_config's Ciphers=,
// KexAlgorithms=, MACs= and HostKeyAlgorithms= syntax.

#ifndef K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_
#define K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_

#include <libssh2.h>

#include <string>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::ssh {

enum class AlgorithmKind { kKex, kCipher, kMac, kHostKey };

/// The ssh_config keyword for `kind` ("KexAlgorithms"), for messages.
const char* AlgorithmOption(AlgorithmKind kind);

/// OpenSSH 9.2's client defaults (ssh_config(5)), in its order. libssh2's
/// own defaults also offer aes128-cbc, 3des-cbc, diffie-hellman-group14-
/// sha1, group1-sha1, hmac-md5 and ssh-dss, which ssh refuses unless
/// asked: a drop-in for ssh must not be weaker than ssh.
std::vector<std::string> OpenSshDefaultAlgorithms(AlgorithmKind kind);

/// Applies an ssh_config value to the defaults: "a,b" replaces them,
/// "+a,b" appends, "-a,b*" removes (with * and ? wildcards), "^a,b" puts
/// first. Empty lists, empty names and blanks are kInvalidArgument.
StatusOr<std::vector<std::string>> ApplyAlgorithmSpec(AlgorithmKind kind,
                                                      const std::string& spec);

/// The libssh2 preference string: `wanted`, in order, limited to what
/// this libssh2 implements (`supported`). Names libssh2 lacks are dropped
/// (chacha20-poly1305 before 1.11); none left is kFailedPrecondition
/// naming the option and what libssh2 has.
StatusOr<std::string> Libssh2Preference(
    AlgorithmKind kind, const std::vector<std::string>& wanted,
    const std::vector<std::string>& supported);

/// What the session offers, resolved from ssh_config.
struct AlgorithmPrefs {
  std::vector<std::string> kex = OpenSshDefaultAlgorithms(AlgorithmKind::kKex);
  std::vector<std::string> ciphers =
      OpenSshDefaultAlgorithms(AlgorithmKind::kCipher);
  std::vector<std::string> macs = OpenSshDefaultAlgorithms(AlgorithmKind::kMac);
  std::vector<std::string> host_keys =
      OpenSshDefaultAlgorithms(AlgorithmKind::kHostKey);
};

/// The algorithms of `kind` this libssh2 implements.
std::vector<std::string> SupportedAlgorithms(LIBSSH2_SESSION* session,
                                             AlgorithmKind kind);

/// Sets kex, cipher and MAC preferences (both directions) on a session
/// before its handshake. Host keys are set by the caller, which orders
/// them by known_hosts; it filters with HostKeyPreference().
Status ApplyAlgorithmPrefs(LIBSSH2_SESSION* session,
                           const AlgorithmPrefs& prefs);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_
