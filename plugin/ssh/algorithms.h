// SPDX-License-Identifier: Apache-2.0
// Which key exchange, cipher, MAC and host key algorithms are offered:
// OpenSSH 9's client defaults, changed by ssh_config's Ciphers=,
// KexAlgorithms=, MACs= and HostKeyAlgorithms= syntax. Pure: what a
// libssh2 session does with them is in libssh2_algorithms.h.

#ifndef K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_
#define K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_

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

/// What the session offers, resolved from ssh_config.
struct AlgorithmPrefs {
  std::vector<std::string> kex = OpenSshDefaultAlgorithms(AlgorithmKind::kKex);
  std::vector<std::string> ciphers =
      OpenSshDefaultAlgorithms(AlgorithmKind::kCipher);
  std::vector<std::string> macs = OpenSshDefaultAlgorithms(AlgorithmKind::kMac);
  std::vector<std::string> host_keys =
      OpenSshDefaultAlgorithms(AlgorithmKind::kHostKey);
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_ALGORITHMS_H_
