// SPDX-License-Identifier: Apache-2.0
// Handshake and authentication failures: classification and messages.

#include "plugin/ssh/handshake_diagnosis.h"

#include <sys/socket.h>

#include <cerrno>
#include <optional>

#include "plugin/base/strings.h"
#include "plugin/ssh/kex_offer.h"
#include "plugin/ssh/libssh2_algorithms.h"
#include "plugin/ssh/libssh2_handles.h"
#include "plugin/ssh/socket_fate.h"

namespace k8s_agent::ssh {

Status HandshakeError(LIBSSH2_SESSION* session, int sock, int rc,
                      std::string_view kex_received,
                      const AlgorithmPrefs& offered) {
  std::string why = LastError(session);
  if (rc == LIBSSH2_ERROR_KEX_FAILURE) {
    return FailedPreconditionError(
        "SSH algorithm negotiation failed: " +
        NegotiationDetail(session, kex_received, offered));
  }
  if (rc == LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE) {
    // The server still being there (no EOF, no error) means libssh2 gave
    // up on what it sent, not that the connection broke.
    char byte;
    ssize_t n = ::recv(sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    bool alive = n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    if (alive) {
      auto agreed = [&](int method) {
        const char* m = libssh2_session_methods(session, method);
        return std::string(m != nullptr ? m : "?");
      };
      return FailedPreconditionError(
          "SSH key exchange failed (" + why + ") with kex " +
          agreed(LIBSSH2_METHOD_KEX) + " and host key algorithm " +
          agreed(LIBSSH2_METHOD_HOSTKEY) +
          ": k8s-agent cannot verify the server's host key signature; "
          "configure sshd with an ed25519, ECDSA or RSA host key");
    }
  }
  return UnavailableError("SSH handshake failed: " + why);
}

std::string NegotiationDetail(LIBSSH2_SESSION* session,
                              std::string_view kex_received,
                              const AlgorithmPrefs& offered) {
  std::optional<KexAlgorithms> offer = ParseServerKexinit(kex_received);
  if (!offer) {
    return "the server's algorithm offer could not be read (libssh2: " +
           LastError(session) + ")";
  }
  auto supported = [&](int method) {
    return Join(SupportedAlgorithms(session, method), ",");
  };
  KexAlgorithms can{
      supported(LIBSSH2_METHOD_KEX), supported(LIBSSH2_METHOD_HOSTKEY),
      supported(LIBSSH2_METHOD_CRYPT_SC), supported(LIBSSH2_METHOD_MAC_SC),
      supported(LIBSSH2_METHOD_COMP_SC)};
  // What the preferences held: the settings, less what libssh2 lacks (as
  // ApplyAlgorithmPrefs set them). Compression is never narrowed.
  auto ours = [&](AlgorithmKind kind, const std::vector<std::string>& wanted) {
    StatusOr<std::string> pref =
        Libssh2Preference(kind, wanted, SupportedAlgorithms(session, kind));
    return pref.ok() ? *pref : std::string();
  };
  KexAlgorithms sent{ours(AlgorithmKind::kKex, offered.kex),
                     ours(AlgorithmKind::kHostKey, offered.host_keys),
                     ours(AlgorithmKind::kCipher, offered.ciphers),
                     ours(AlgorithmKind::kMac, offered.macs), can.compression};
  return DescribeNegotiationFailure(*offer, sent, can);
}

AuthFailure ClassifyAuthFailure(int rc) {
  if (rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED ||
      rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED) {
    return AuthFailure::kRejected;
  }
  if (rc == LIBSSH2_ERROR_FILE || rc == LIBSSH2_ERROR_KEYFILE_AUTH_FAILED ||
      rc == LIBSSH2_ERROR_METHOD_NOT_SUPPORTED) {
    return AuthFailure::kUnusable;
  }
  return AuthFailure::kBroken;
}

Status NoIdentityFileError(const std::string& user) {
  return PermissionDeniedError(
      "no identity file to authenticate user \"" + user +
      "\" with: none of ~/.ssh/id_ed25519, id_ecdsa, id_rsa exists; pass "
      "-i FILE or set IdentityFile");
}

Status UnreadableAuthReplyError(const std::string& user, const std::string& key,
                                const std::string& why) {
  return FailedPreconditionError(
      "authentication as user \"" + user +
      "\": libssh2 could not read the server's answer (" + why +
      "), which was not a refusal of " + key + ": libssh2 drops packets over " +
      std::to_string(kLibssh2MaxIncomingPacket) +
      " bytes, and an sshd Banner that long does this (ssh accepts it); "
      "shorten the Banner in sshd_config");
}

Status DisconnectedDuringAuthError(const std::string& user,
                                   const ServerDisconnect& disconnect,
                                   const std::vector<std::string>& tried) {
  std::string text = "server closed the connection during authentication: \"" +
                     Printable(disconnect.message, 200) +
                     "\" (SSH disconnect reason " +
                     std::to_string(disconnect.reason) + ")";
  if (!tried.empty()) {
    text += " after k8s-agent tried " + Join(tried, ", ") + " as user \"" +
            user + "\"";
  }
  // OpenSSH's words for MaxAuthTries; reason 14 is the same from others.
  bool max_tries =
      disconnect.message.find("Too many authentication failures") !=
          std::string::npos ||
      disconnect.reason == SSH_DISCONNECT_NO_MORE_AUTH_METHODS_AVAILABLE;
  if (max_tries) {
    text +=
        ". sshd's MaxAuthTries counts every key offered, and k8s-agent offers "
        "each -i / IdentityFile in turn: offer fewer keys (the one in the "
        "pod's authorized_keys first), or raise MaxAuthTries in the pod's "
        "sshd_config";
  } else {
    text += ". sshd's log on the pod says why";
  }
  return PermissionDeniedError(text);
}

Status NoUsableKeyError(const std::string& user,
                        const std::vector<std::string>& tried) {
  return PermissionDeniedError(
      "public key authentication as user \"" + user +
      "\" impossible: no usable key; tried " + Join(tried, ", ") +
      ". Pass a usable key with -i FILE or IdentityFile");
}

Status KeysRejectedError(const std::string& user,
                         const std::vector<std::string>& tried) {
  return PermissionDeniedError(
      "public key authentication as user \"" + user + "\" failed; tried " +
      Join(tried, ", ") + ". Check that the matching public key is in ~" +
      user +
      "/.ssh/authorized_keys on the pod (or sshd's AuthorizedKeysFile), "
      "that sshd's StrictModes accepts the modes of that file and its "
      "directories (a Secret mount needs defaultMode 0600/0400 and must not "
      "be group/world-writable), and that the right user is used (-l or "
      "User)");
}

}  // namespace k8s_agent::ssh
