// SPDX-License-Identifier: Apache-2.0
// What an SSH server offers in its first KEXINIT, read from the bytes it
// sent, so a failed algorithm negotiation can say what the server offered
// next to what we support (libssh2 frees the server's list and says only
// "Unable to exchange encryption keys").

#ifndef K8S_AGENT_PLUGIN_SSH_KEX_OFFER_H_
#define K8S_AGENT_PLUGIN_SSH_KEX_OFFER_H_

#include <optional>
#include <string>
#include <string_view>

namespace k8s_agent::ssh {

/// Comma-separated name-lists, as on the wire (RFC 4253 7.1). Ciphers,
/// MACs and compression are the server-to-client ones.
struct KexAlgorithms {
  std::string kex;
  std::string host_key;
  std::string ciphers;
  std::string macs;
  std::string compression;
};

/// Parses the start of what the server sent: optional text lines, the
/// "SSH-2.0-..." banner, then the (unencrypted) KEXINIT packet. nullopt
/// while incomplete or if it is not that.
std::optional<KexAlgorithms> ParseServerKexinit(std::string_view received);

/// Whether what the server sent (as above) has reached its NEWKEYS: the
/// key exchange is done and what follows is encrypted. Walks the
/// unencrypted packets before it; false while incomplete or malformed.
bool ServerSentNewkeys(std::string_view received);

/// "no common host key algorithm: the server offers A,B; k8s-agent
/// supports C,D" for the first kind with nothing in common (the order
/// OpenSSH checks them in), or a summary of the whole offer if every kind
/// overlaps. Pseudo-algorithms (ext-info-*, kex-strict-*) are left out.
std::string DescribeNegotiationFailure(const KexAlgorithms& server,
                                       const KexAlgorithms& ours);

/// The same against what k8s-agent `offered` (its settings), saying when
/// libssh2 `supported` one the server offers that the settings leave out
/// (ssh-rsa, SHA-1 key exchange: off by default, as in OpenSSH 9) and the
/// -o KEY=+NAME that adds it back, as ssh would ("no matching host key
/// type found. Their offer: ssh-rsa").
std::string DescribeNegotiationFailure(const KexAlgorithms& server,
                                       const KexAlgorithms& offered,
                                       const KexAlgorithms& supported);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_KEX_OFFER_H_
