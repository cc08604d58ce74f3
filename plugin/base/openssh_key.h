// SPDX-License-Identifier: Apache-2.0
// OpenSSH's own private key format ("openssh-key-v1", ssh-keygen's default
// since 7.8), read as far as it is stored in clear: the cipher, the KDF and
// the public key. One parser for the agent (what key it was handed) and the
// workers' sshd wrapper (what key the job's Secret holds).

#ifndef K8S_AGENT_PLUGIN_BASE_OPENSSH_KEY_H_
#define K8S_AGENT_PLUGIN_BASE_OPENSSH_KEY_H_

#include <string>
#include <string_view>

#include "plugin/base/status.h"

namespace k8s_agent {

/// The clear part of an openssh-key-v1 file (OpenSSH's PROTOCOL.key).
struct OpenSshKey {
  std::string cipher;  ///< "none" unless passphrase-protected.
  std::string kdf;     ///< "none", or "bcrypt" for a protected key.
  /// The key type from the public key: "ssh-ed25519", "ssh-rsa",
  /// "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com", ...
  std::string type;
  /// The public key in SSH wire format, as base64 in a .pub file.
  std::string public_blob;

  bool encrypted() const { return cipher != "none"; }
};

/// True if `text` has OpenSSH's BEGIN line, whatever follows it: such a
/// file is this format or a damaged copy of it, never PEM.
bool HasOpenSshKeyArmour(std::string_view text);

/// Parses the armoured text of an openssh-key-v1 private key without its
/// passphrase. kFailedPrecondition, saying what is wrong, for text that is
/// not such a key or was damaged: no END line, not base64, no magic, a
/// field cut short, not exactly one key (OpenSSH reads only one), an
/// unknown KDF, or a plain key whose check words differ.
StatusOr<OpenSshKey> ParseOpenSshKey(std::string_view text);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_OPENSSH_KEY_H_
