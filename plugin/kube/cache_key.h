// SPDX-License-Identifier: Apache-2.0
// The file name under which the agents of one user share what one of them
// fetched (an exec credential, a namespace's pods).

#ifndef K8S_AGENT_PLUGIN_KUBE_CACHE_KEY_H_
#define K8S_AGENT_PLUGIN_KUBE_CACHE_KEY_H_

#include <string>
#include <vector>

namespace k8s_agent::kube {

/// The hex SHA-256 of `fields`, length-prefixed so that ("ab", "c") and
/// ("a", "bc") differ. SHA-256, not a fast hash: a field may be a secret
/// (an environment variable's value), and the key is a file name others may
/// see.
std::string CacheKey(const std::vector<std::string>& fields);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CACHE_KEY_H_
