// SPDX-License-Identifier: Apache-2.0
// What a private key file is, read without its passphrase, so a key the
// agent cannot use is reported as such (libssh2 says only "rejected" or
// "Unable to extract public key from private key file" for a key it could
// not decrypt or does not support).

#ifndef K8S_AGENT_PLUGIN_SSH_KEY_FILE_H_
#define K8S_AGENT_PLUGIN_SSH_KEY_FILE_H_

#include <string>
#include <string_view>

namespace k8s_agent::ssh {

struct PrivateKeyInfo {
  bool recognized = false;  ///< An OpenSSH or PEM private key.
  bool encrypted = false;   ///< Protected by a passphrase.
  std::string type;         ///< "ssh-ed25519", "ssh-rsa", "ssh-dss", ...
  /// OpenSSH's BEGIN line over a body that is not openssh-key-v1
  /// (truncated, edited, not base64; ParseOpenSshKey): no library can
  /// read it.
  bool corrupt = false;
};

/// Parses the text of a private key file: OpenSSH's "openssh-key-v1"
/// format (type and cipher are stored in clear) or PEM (RSA, EC, DSA,
/// PKCS#8, with "ENCRYPTED" markers).
PrivateKeyInfo InspectPrivateKey(std::string_view text);

/// Why this build cannot use the key, or "" if it may: passphrase, DSA
/// (libssh2 1.11.1 has none), security keys (sk-*), unreadable contents.
std::string UnusableKeyReason(const PrivateKeyInfo& key);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_KEY_FILE_H_
