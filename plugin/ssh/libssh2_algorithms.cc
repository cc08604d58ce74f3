// SPDX-License-Identifier: Apache-2.0
// Algorithm lists against the libssh2 session: filtering and setting prefs.

#include "plugin/ssh/libssh2_algorithms.h"

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

// libssh2's host key method names for a known_hosts key type.
std::string HostKeyMethodsFor(const std::string& key_type) {
  if (key_type == "ssh-rsa") return "rsa-sha2-512,rsa-sha2-256,ssh-rsa";
  return key_type;
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
                                             int method_type) {
  const char** algs = nullptr;
  int n = libssh2_session_supported_algs(session, method_type, &algs);
  if (n <= 0 || algs == nullptr) return {};
  std::vector<std::string> out(algs, algs + n);
  libssh2_free(session, algs);
  return out;
}

std::vector<std::string> SupportedAlgorithms(LIBSSH2_SESSION* session,
                                             AlgorithmKind kind) {
  return SupportedAlgorithms(session, MethodType(kind));
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

Status ApplyHostKeyPrefs(LIBSSH2_SESSION* session,
                         const std::vector<std::string>& wanted,
                         const std::vector<std::string>& known_types) {
  // HostKeyAlgorithms (OpenSSH's defaults: no ssh-rsa, ssh-dss) bounds what
  // is offered at all; known_hosts only reorders it.
  K8S_ASSIGN_OR_RETURN(
      std::string allowed,
      Libssh2Preference(AlgorithmKind::kHostKey, wanted,
                        SupportedAlgorithms(session, AlgorithmKind::kHostKey)));
  std::vector<std::string> supported = Split(allowed, ',');
  std::vector<std::string> order;
  auto add = [&](const std::string& name) {
    bool ok = false;
    for (const std::string& s : supported) ok = ok || s == name;
    for (const std::string& s : order) ok = ok && s != name;
    if (ok) order.push_back(name);
  };
  for (const std::string& type : known_types) {
    for (const std::string& m : Split(HostKeyMethodsFor(type), ',')) add(m);
  }
  for (const std::string& s : supported) add(s);
  std::string pref = Join(order, ",");
  libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, pref.c_str());
  return OkStatus();
}

}  // namespace k8s_agent::ssh
