// SPDX-License-Identifier: Apache-2.0
// Checking a client certificate against its private key before any
// handshake, so a mismatch is named as such (kubectl: "tls: private key
// does not match public key"), not as a failed server verification.

#ifndef K8S_AGENT_PLUGIN_KUBE_CLIENT_KEY_PAIR_H_
#define K8S_AGENT_PLUGIN_KUBE_CLIENT_KEY_PAIR_H_

#include <string>
#include <string_view>

#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"

namespace k8s_agent::kube {

/// OK when `cert_pem`'s first certificate and `key_pem`'s key are a pair
/// (X509_check_private_key). kFailedPrecondition otherwise, naming
/// `cert_origin` and `key_origin` (the files or kubeconfig fields, e.g.
/// "client-certificate /x/c.crt"): unparsable PEM, or the mismatch.
Status CheckClientKeyPair(std::string_view cert_pem, std::string_view key_pem,
                          const std::string& cert_origin,
                          const std::string& key_origin);

/// CheckClientKeyPair on `config`'s client certificate and key, each the
/// kubeconfig's inline data or a file (read here, an unreadable one
/// named); OK when either is not set. Origins name the field or file:
/// "client-certificate-data of SOURCE", "client-key /x/k.key".
Status CheckConfiguredKeyPair(const ClusterConfig& config);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CLIENT_KEY_PAIR_H_
