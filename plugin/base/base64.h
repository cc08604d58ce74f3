// SPDX-License-Identifier: Apache-2.0
// Standard base64 (RFC 4648 section 4): known_hosts keys, OpenSSH private
// keys, kubeconfig *-data fields.

#ifndef K8S_AGENT_PLUGIN_BASE_BASE64_H_
#define K8S_AGENT_PLUGIN_BASE_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace k8s_agent {

/// Standard alphabet, '=' padded.
std::string Base64Encode(std::string_view bytes);

/// Decodes the standard alphabet. ASCII whitespace is skipped (PEM bodies
/// and YAML scalars wrap; Go's decoder, which kubectl uses, skips line
/// ends too); padding is optional but, when present, only at the end and
/// at most "==". nullopt on anything else, including the URL-safe
/// alphabet, which neither OpenSSH nor kubectl accepts.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_BASE64_H_
