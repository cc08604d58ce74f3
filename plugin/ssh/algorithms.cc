// SPDX-License-Identifier: Apache-2.0
// Algorithm lists: OpenSSH's defaults, ssh_config edits, libssh2 prefs.

#include "plugin/ssh/algorithms.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Key exchange pseudo-algorithms (RFC 8308 ext-info, OpenSSH's strict kex
// against Terrapin) that libssh2 lists among its kex methods.
bool IsKexExtension(const std::string& name) {
  return name == "ext-info-c" || StartsWith(name, "kex-strict-");
}

int MethodType(AlgorithmKind kind) {
  switch (kind) {
    case AlgorithmKind::kKex:
      return LIBSSH2_METHOD_KEX;
    case AlgorithmKind::kCipher:
      return LIBSSH2_METHOD_CRYPT_CS;
    case AlgorithmKind::kMac:
      return LIBSSH2_METHOD_MAC_CS;
    case AlgorithmKind::kHostKey:
      return LIBSSH2_METHOD_HOSTKEY;
  }
  return LIBSSH2_METHOD_KEX;
}

}  // namespace

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

StatusOr<std::string> Libssh2Preference(
    AlgorithmKind kind, const std::vector<std::string>& wanted,
    const std::vector<std::string>& supported) {
  std::vector<std::string> out;
  if (kind == AlgorithmKind::kKex) {
#if LIBSSH2_VERSION_NUM < 0x010b01
    // Before 1.11.1 the extensions are ordinary entries of the list (1.11.1
    // adds them to any preference itself): keep those this libssh2 has.
    for (const std::string& s : supported) {
      if (IsKexExtension(s)) out.push_back(s);
    }
#endif
  }
  size_t extensions = out.size();
  for (const std::string& w : wanted) {
    if (Contains(supported, w) && !Contains(out, w)) out.push_back(w);
  }
  if (out.size() == extensions) {
    std::vector<std::string> real;
    for (const std::string& s : supported) {
      if (!IsKexExtension(s)) real.push_back(s);
    }
    return FailedPreconditionError(
        std::string(AlgorithmOption(kind)) + " " + Join(wanted, ",") +
        ": none of these is implemented by libssh2 " + LIBSSH2_VERSION +
        " (it has " + Join(real, ",") + "); set " + AlgorithmOption(kind) +
        " to one of those");
  }
  return Join(out, ",");
}

std::vector<std::string> SupportedAlgorithms(LIBSSH2_SESSION* session,
                                             AlgorithmKind kind) {
  const char** algs = nullptr;
  int n = libssh2_session_supported_algs(session, MethodType(kind), &algs);
  if (n <= 0 || algs == nullptr) return {};
  std::vector<std::string> out(algs, algs + n);
  libssh2_free(session, algs);
  return out;
}

Status ApplyAlgorithmPrefs(LIBSSH2_SESSION* session,
                           const AlgorithmPrefs& prefs) {
  struct Item {
    AlgorithmKind kind;
    const std::vector<std::string>* wanted;
    std::vector<int> methods;
  };
  const Item items[] = {
      {AlgorithmKind::kKex, &prefs.kex, {LIBSSH2_METHOD_KEX}},
      {AlgorithmKind::kCipher,
       &prefs.ciphers,
       {LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC}},
      {AlgorithmKind::kMac,
       &prefs.macs,
       {LIBSSH2_METHOD_MAC_CS, LIBSSH2_METHOD_MAC_SC}},
  };
  for (const Item& item : items) {
    K8S_ASSIGN_OR_RETURN(
        std::string pref,
        Libssh2Preference(item.kind, *item.wanted,
                          SupportedAlgorithms(session, item.kind)));
    for (int method : item.methods) {
      if (libssh2_session_method_pref(session, method, pref.c_str()) != 0) {
        return InternalError(std::string("libssh2 refused the ") +
                             AlgorithmOption(item.kind) + " list " + pref);
      }
    }
  }
  return OkStatus();
}

}  // namespace k8s_agent::ssh
