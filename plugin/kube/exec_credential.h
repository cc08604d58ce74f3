// SPDX-License-Identifier: Apache-2.0
// kubeconfig `users[].user.exec` credential plugins (EKS `aws eks
// get-token`, GKE `gke-gcloud-auth-plugin`, AKS `kubelogin`), run as
// client-go runs them: the client.authentication.k8s.io ExecCredential
// protocol, v1 and v1beta1. Plain structs only: the protocol's functions
// are in exec_protocol.h, running a plugin in exec_plugin.h, the state
// machine that decides when to run it in exec_credential_source.h.

#ifndef K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_
#define K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace k8s_agent::kube {

constexpr char kExecApiV1[] = "client.authentication.k8s.io/v1";
constexpr char kExecApiV1beta1[] = "client.authentication.k8s.io/v1beta1";

/// One `exec:` stanza of a kubeconfig user, validated.
struct ExecConfig {
  std::string api_version;  ///< kExecApiV1 or kExecApiV1beta1.
  /// As written; relative paths with a slash already made relative to the
  /// kubeconfig file's directory. A bare name is looked up in $PATH when
  /// the plugin runs.
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  ///< Added, in order.
  std::string install_hint;
  bool provide_cluster_info = false;
  std::string interactive_mode;  ///< "Never" or "IfAvailable".
  /// "FILE: user \"u\"", for messages.
  std::string where;
  /// Where credentials are cached across agent processes ("" = nowhere):
  /// $XDG_CACHE_HOME/k8s-agent, else $HOME/.kube/cache/k8s-agent.
  std::string cache_dir;
};

/// What the API server is, for spec.cluster when provideClusterInfo.
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string ca_pem;  ///< Sent base64-encoded as certificate-authority-data.
  std::string proxy_url;
};

/// A plugin's answer. Never logged.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  /// Unix seconds of status.expirationTimestamp; 0 = none given.
  int64_t expires_at = 0;
};

/// How long a plugin may run before its process group is killed.
constexpr int kExecTimeoutSeconds = 60;

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_
