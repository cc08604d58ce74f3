// SPDX-License-Identifier: Apache-2.0
// Why an SSH handshake or public-key authentication failed, classified
// (retry or fail at once) and said in words a user can act on.

#ifndef K8S_AGENT_PLUGIN_SSH_HANDSHAKE_DIAGNOSIS_H_
#define K8S_AGENT_PLUGIN_SSH_HANDSHAKE_DIAGNOSIS_H_

#include <libssh2.h>

#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/ssh/algorithms.h"

namespace k8s_agent::ssh {

/// The Status for libssh2_session_handshake() failing with `rc` on the
/// connected socket `sock`. Nothing in common (algorithms) or a key
/// exchange the server completed but we could not (its host key
/// signature) will not heal: kFailedPrecondition. Anything else (refused,
/// reset, dropped during banner or kex) may be an sshd still starting or
/// throttling (MaxStartups): kUnavailable, worth another attempt.
/// `kex_received` is what the server sent up to then (banner, KEXINIT).
/// `offered`: the settings the session's preferences came from.
Status HandshakeError(LIBSSH2_SESSION* session, int sock, int rc,
                      std::string_view kex_received,
                      const AlgorithmPrefs& offered);

/// What the server offered (from `kex_received`) against what k8s-agent
/// offered (`offered`, limited to what this libssh2 supports), naming what
/// libssh2 has but the settings leave out, for a failed negotiation.
std::string NegotiationDetail(LIBSSH2_SESSION* session,
                              std::string_view kex_received,
                              const AlgorithmPrefs& offered);

/// What one failed libssh2_userauth_publickey_* call says about the key.
enum class AuthFailure {
  kRejected,  ///< The server refused this key: try the next one.
  kUnusable,  ///< libssh2 could not use the file: try the next one.
  kBroken,    ///< The connection broke.
};
AuthFailure ClassifyAuthFailure(int rc);

/// What the server's SSH_MSG_DISCONNECT said (RFC 4253 11.1), as libssh2's
/// disconnect callback hands it over.
struct ServerDisconnect {
  int reason = 0;       ///< SSH_DISCONNECT_* (sshd's MaxAuthTries: 2).
  std::string message;  ///< The server's text, unescaped.
};

/// No IdentityFile exists at all.
Status NoIdentityFileError(const std::string& user);
/// The server's answer to trying `key` could not be read (IsUnreadable-
/// AuthReply): in practice a Banner over libssh2's packet limit.
Status UnreadableAuthReplyError(const std::string& user, const std::string& key,
                                const std::string& why);
/// The server ended the connection during authentication (libssh2 then
/// says only "Waiting for USERAUTH response"), after trying the keys in
/// `tried` ("path" or "path (why)", the last one unanswered). Not
/// retried: sshd's "Too many authentication failures" (MaxAuthTries) or
/// any other refusal says the same to the next attempt.
Status DisconnectedDuringAuthError(const std::string& user,
                                   const ServerDisconnect& disconnect,
                                   const std::vector<std::string>& tried);
/// Every key in `tried` ("path (why)") was unusable: none was offered.
Status NoUsableKeyError(const std::string& user,
                        const std::vector<std::string>& tried);
/// At least one key was offered and refused; `tried` says what happened to
/// each, and the message lists what to check on the pod.
Status KeysRejectedError(const std::string& user,
                         const std::vector<std::string>& tried);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_HANDSHAKE_DIAGNOSIS_H_
