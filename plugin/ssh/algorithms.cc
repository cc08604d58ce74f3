// SPDX-License-Identifier: Apache-2.0
// Algorithm lists: OpenSSH's defaults and ssh_config edits. No libssh2
// here: the option parser links this (libssh2_algorithms.cc does the rest).

#include "plugin/ssh/algorithms.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {

const char* AlgorithmOption(AlgorithmKind kind) {
  switch (kind) {
    case AlgorithmKind::kKex:
      return "KexAlgorithms";
    case AlgorithmKind::kCipher:
      return "Ciphers";
    case AlgorithmKind::kMac:
      return "MACs";
    case AlgorithmKind::kHostKey:
      return "HostKeyAlgorithms";
  }
  return "";
}

std::vector<std::string> OpenSshDefaultAlgorithms(AlgorithmKind kind) {
  switch (kind) {
    case AlgorithmKind::kKex:
      return {"sntrup761x25519-sha512@openssh.com",
              "curve25519-sha256",
              "curve25519-sha256@libssh.org",
              "ecdh-sha2-nistp256",
              "ecdh-sha2-nistp384",
              "ecdh-sha2-nistp521",
              "diffie-hellman-group-exchange-sha256",
              "diffie-hellman-group16-sha512",
              "diffie-hellman-group18-sha512",
              "diffie-hellman-group14-sha256"};
    case AlgorithmKind::kCipher:
      return {"chacha20-poly1305@openssh.com",
              "aes128-ctr",
              "aes192-ctr",
              "aes256-ctr",
              "aes128-gcm@openssh.com",
              "aes256-gcm@openssh.com"};
    case AlgorithmKind::kMac:
      return {"umac-64-etm@openssh.com",
              "umac-128-etm@openssh.com",
              "hmac-sha2-256-etm@openssh.com",
              "hmac-sha2-512-etm@openssh.com",
              "hmac-sha1-etm@openssh.com",
              "umac-64@openssh.com",
              "umac-128@openssh.com",
              "hmac-sha2-256",
              "hmac-sha2-512",
              "hmac-sha1"};
    case AlgorithmKind::kHostKey:
      return {"ssh-ed25519-cert-v01@openssh.com",
              "ecdsa-sha2-nistp256-cert-v01@openssh.com",
              "ecdsa-sha2-nistp384-cert-v01@openssh.com",
              "ecdsa-sha2-nistp521-cert-v01@openssh.com",
              "rsa-sha2-512-cert-v01@openssh.com",
              "rsa-sha2-256-cert-v01@openssh.com",
              "ssh-ed25519",
              "ecdsa-sha2-nistp256",
              "ecdsa-sha2-nistp384",
              "ecdsa-sha2-nistp521",
              "rsa-sha2-512",
              "rsa-sha2-256"};
  }
  return {};
}

StatusOr<std::vector<std::string>> ApplyAlgorithmSpec(AlgorithmKind kind,
                                                      const std::string& spec) {
  const std::string option = AlgorithmOption(kind);
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError(option + ": " + why + " in \"" +
                                Printable(spec) + "\"");
  };
  std::string list = spec;
  char op = 0;
  if (!list.empty() && (list[0] == '+' || list[0] == '-' || list[0] == '^')) {
    op = list[0];
    list = list.substr(1);
  }
  if (list.empty()) return bad("empty algorithm list");
  std::vector<std::string> names = Split(list, ',');
  for (const std::string& n : names) {
    if (n.empty()) return bad("empty algorithm name");
    for (char c : n) {
      if (c <= ' ' || c >= 0x7f) return bad("invalid character");
    }
  }
  std::vector<std::string> defaults = OpenSshDefaultAlgorithms(kind);
  std::vector<std::string> out;
  switch (op) {
    case '+':
      out = defaults;
      for (const std::string& n : names) {
        if (!Contains(out, n)) out.push_back(n);
      }
      break;
    case '^':
      for (const std::string& n : names) {
        if (!Contains(out, n)) out.push_back(n);
      }
      for (const std::string& d : defaults) {
        if (!Contains(out, d)) out.push_back(d);
      }
      break;
    case '-':
      for (const std::string& d : defaults) {
        bool drop = std::any_of(
            names.begin(), names.end(),
            [&](const std::string& p) { return MatchPattern(d, p); });
        if (!drop) out.push_back(d);
      }
      if (out.empty()) return bad("nothing left after removing");
      break;
    default:
      for (const std::string& n : names) {
        if (!Contains(out, n)) out.push_back(n);
      }
      break;
  }
  return out;
}

}  // namespace k8s_agent::ssh
