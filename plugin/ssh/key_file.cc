// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/key_file.h"

#include "plugin/base/openssh_key.h"
#include "plugin/base/strings.h"

namespace k8s_agent::ssh {

PrivateKeyInfo InspectPrivateKey(std::string_view text) {
  PrivateKeyInfo info;
  if (HasOpenSshKeyArmour(text)) {
    StatusOr<OpenSshKey> key = ParseOpenSshKey(text);
    info.corrupt = !key.ok();
    if (key.ok()) {
      info.recognized = true;
      info.encrypted = key->encrypted();
      info.type = key->type;
    }
    return info;
  }
  struct Pem {
    std::string_view begin;
    const char* type;  // "" when the PEM header does not say.
  };
  const Pem pems[] = {
      {"-----BEGIN RSA PRIVATE KEY-----", "ssh-rsa"},
      {"-----BEGIN EC PRIVATE KEY-----", "ecdsa"},
      {"-----BEGIN DSA PRIVATE KEY-----", "ssh-dss"},
      {"-----BEGIN PRIVATE KEY-----", ""},
      {"-----BEGIN ENCRYPTED PRIVATE KEY-----", ""},
  };
  for (const Pem& p : pems) {
    if (text.find(p.begin) == std::string_view::npos) continue;
    info.recognized = true;
    info.type = p.type;
    info.encrypted =
        text.find("ENCRYPTED") != std::string_view::npos;  // Both styles.
    return info;
  }
  return info;
}

std::string UnusableKeyReason(const PrivateKeyInfo& key) {
  if (key.corrupt) {
    return "corrupt: an OpenSSH private key file whose body is not a key "
           "(truncated or damaged when copied?); copy it again or make a "
           "new one with ssh-keygen";
  }
  if (!key.recognized) {
    return "not a private key k8s-agent can read (OpenSSH or PEM format)";
  }
  if (key.encrypted) {
    return "passphrase-protected; k8s-agent cannot ask for a passphrase and "
           "has no ssh-agent support: use a key without one (ssh-keygen -p "
           "-N '' -f FILE removes it)";
  }
  if (key.type == "ssh-dss") {
    return "DSA keys are not supported (nor by OpenSSH >= 7.0 by default): "
           "use an ed25519, ECDSA or RSA key";
  }
  if (StartsWith(key.type, "sk-")) {
    return "security-key (FIDO) type " + key.type +
           " is not supported: use an ed25519, ECDSA or RSA key";
  }
  return "";
}

}  // namespace k8s_agent::ssh
