// SPDX-License-Identifier: Apache-2.0
// OpenSSH known_hosts lookup and the StrictHostKeyChecking policy.

#ifndef K8S_AGENT_PLUGIN_SSH_KNOWN_HOSTS_H_
#define K8S_AGENT_PLUGIN_SSH_KNOWN_HOSTS_H_

#include <libssh2.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent::ssh {

/// ssh's fingerprint format for a SHA-256 digest (32 raw bytes):
/// "SHA256:" + base64 without the '=' padding.
std::string Sha256Fingerprint(std::string_view digest);

/// The algorithm name at the start of a public key blob ("ssh-ed25519");
/// empty if the blob is malformed.
std::string KeyBlobType(std::string_view blob);

/// How known_hosts names a host: "host" for port 22, "[host]:port" else.
std::string KnownHostsName(const std::string& host, int port);

/// What the known_hosts files say about one key under one name.
enum class HostKeyStatus { kNotFound, kMismatch, kMatch, kRevoked };

struct HostKeyLookup {
  HostKeyStatus status = HostKeyStatus::kNotFound;
  /// The deciding entry (match, revoked, or the first conflicting one).
  std::string file;
  int line = 0;
};

/// Looks `key_blob` up under `name` (already in KnownHostsName form) in
/// `files` (missing files are skipped). Plain and wildcard/negated entries
/// are matched here; hashed "|1|" entries through libssh2's knownhost API,
/// which needs a session (an unconnected one is fine). @cert-authority
/// lines are ignored; a matching @revoked key is kRevoked.
HostKeyLookup LookupHostKey(LIBSSH2_SESSION* session,
                            const std::vector<std::string>& files,
                            const std::string& name, std::string_view key_blob);

/// Key types ("ssh-ed25519") that plain entries in `files` list for any of
/// `names`, in file order: used to prefer those host key algorithms during
/// the handshake, as ssh does.
std::vector<std::string> KnownKeyTypes(const std::vector<std::string>& files,
                                       const std::vector<std::string>& names);

/// Appends "name keytype base64" to `file` under an exclusive flock, unless
/// the same entry is already there (many agents may add the same pod at
/// once). Creates the file (0600) and its directory (0700) if needed.
Status AppendKnownHost(const std::string& file, const std::string& name,
                       std::string_view key_blob);

/// The StrictHostKeyChecking decision for a server key. The key is checked
/// under `alias` (the host name Open MPI gave) and also accepted under `ip`.
/// A mismatch or revoked key is always kFailedPrecondition (with the
/// fingerprint, the conflicting file:line and the ssh-keygen -R fix); an
/// unknown key is refused under kYes and added to files[0] under
/// kAcceptNew and kNo (as ssh does). `fingerprint` is Sha256Fingerprint of
/// the key.
Status VerifyHostKey(LIBSSH2_SESSION* session, StrictHostKeyChecking policy,
                     const std::vector<std::string>& files,
                     const std::string& alias, const std::string& ip, int port,
                     std::string_view key_blob, const std::string& fingerprint);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_KNOWN_HOSTS_H_
