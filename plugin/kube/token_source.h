// SPDX-License-Identifier: Apache-2.0
// Where the transport's credential comes from: a token file (re-read when
// it changes), a kubeconfig literal, or an exec plugin.

#ifndef K8S_AGENT_PLUGIN_KUBE_TOKEN_SOURCE_H_
#define K8S_AGENT_PLUGIN_KUBE_TOKEN_SOURCE_H_

#include <memory>
#include <string>

#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"

namespace k8s_agent::kube {

/// What goes with each request. Never logged.
struct Credential {
  std::string token;            ///< Bearer token; "" = none.
  std::string client_cert_pem;  ///< From an exec plugin; "" = the config's.
  std::string client_key_pem;
};

/// Abstract so the transport need not know whether a file, a literal or a
/// plugin answers.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  /// The credential for the next request. An exec source may run its
  /// plugin here (blocking, bounded by kExecTimeoutSeconds): at start-up,
  /// when the credential nears its expiry, and after Invalidate().
  virtual StatusOr<Credential> Get() = 0;
  /// After a 401: the next Get() must not return the same cached answer.
  virtual void Invalidate() = 0;
};

/// The source `config` asks for: exec, token file, literal, or none.
std::unique_ptr<TokenSource> NewTokenSource(const ClusterConfig& config);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_TOKEN_SOURCE_H_
