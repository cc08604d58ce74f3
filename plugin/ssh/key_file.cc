// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/key_file.h"

#include <cstdint>
#include <optional>

#include "plugin/base/base64.h"
#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

constexpr std::string_view kOpenSshBegin =
    "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kOpenSshMagic{"openssh-key-v1\0", 15};

// An SSH "string" (uint32 length + bytes) at *at, or nullopt.
std::optional<std::string_view> ReadString(std::string_view s, size_t* at) {
  if (s.size() - *at < 4) return std::nullopt;
  uint32_t n = (uint32_t{static_cast<unsigned char>(s[*at])} << 24) |
               (uint32_t{static_cast<unsigned char>(s[*at + 1])} << 16) |
               (uint32_t{static_cast<unsigned char>(s[*at + 2])} << 8) |
               uint32_t{static_cast<unsigned char>(s[*at + 3])};
  *at += 4;
  if (s.size() - *at < n) return std::nullopt;
  std::string_view out = s.substr(*at, n);
  *at += n;
  return out;
}

PrivateKeyInfo InspectOpenSsh(std::string_view text) {
  PrivateKeyInfo info;
  info.corrupt = true;  // Until the body parses.
  size_t begin = text.find('\n', text.find(kOpenSshBegin));
  size_t end = text.find("-----END", begin);
  if (begin == std::string_view::npos || end == std::string_view::npos) {
    return info;
  }
  std::string b64;
  for (char c : text.substr(begin, end - begin)) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') b64 += c;
  }
  std::optional<std::string> blob = Base64Decode(b64);
  if (!blob || blob->compare(0, kOpenSshMagic.size(), kOpenSshMagic) != 0) {
    return info;
  }
  size_t at = kOpenSshMagic.size();
  std::optional<std::string_view> cipher = ReadString(*blob, &at);
  std::optional<std::string_view> kdf = ReadString(*blob, &at);
  std::optional<std::string_view> kdf_options = ReadString(*blob, &at);
  if (!cipher || !kdf || !kdf_options || blob->size() - at < 4) return info;
  at += 4;  // Number of keys.
  std::optional<std::string_view> public_key = ReadString(*blob, &at);
  if (!public_key) return info;
  size_t pk_at = 0;
  std::optional<std::string_view> type = ReadString(*public_key, &pk_at);
  if (!type) return info;
  info.recognized = true;
  info.corrupt = false;
  info.encrypted = *cipher != "none";
  info.type = std::string(*type);
  return info;
}

}  // namespace

PrivateKeyInfo InspectPrivateKey(std::string_view text) {
  if (text.find(kOpenSshBegin) != std::string_view::npos) {
    return InspectOpenSsh(text);
  }
  PrivateKeyInfo info;
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
