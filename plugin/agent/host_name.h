// SPDX-License-Identifier: Apache-2.0
// Validates the HOST Open MPI gave and splits it into what the API needs.

#ifndef K8S_AGENT_PLUGIN_AGENT_HOST_NAME_H_
#define K8S_AGENT_PLUGIN_AGENT_HOST_NAME_H_

#include <string>

#include "plugin/base/status.h"

namespace k8s_agent {

/// What a HOST argument names.
struct HostName {
  enum class Kind { kPodName, kIp };
  Kind kind = Kind::kPodName;
  std::string original;  ///< As given (without user@), for messages.
  /// kPodName: the first DNS label ("w-0" of "w-0.workers.ns.svc...").
  std::string pod_name;
  /// The second label, if any: a headless service / spec.subdomain.
  std::string subdomain;
  /// The third label, if any: the namespace in a cluster DNS name.
  std::string ns;
  /// kIp: the canonical text form of the address.
  std::string ip;
};

/// Parses HOST. Accepts IPv4/IPv6 literals (IPv6 optionally in brackets)
/// and DNS-1123 names (case-folded); rejects anything else before it can
/// reach a URL: '/', '?', '#', '%', '..', spaces, control bytes, labels
/// over 63 bytes, names over 253.
StatusOr<HostName> ParseHostName(const std::string& host);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_HOST_NAME_H_
