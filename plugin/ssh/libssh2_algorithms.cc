// SPDX-License-Identifier: Apache-2.0
// Algorithm lists against the libssh2 session: filtering and setting prefs.

#include "plugin/ssh/libssh2_algorithms.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

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
