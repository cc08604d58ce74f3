// SPDX-License-Identifier: Apache-2.0
// kubeconfig `users[].user.exec` credential plugins (EKS `aws eks
// get-token`, GKE `gke-gcloud-auth-plugin`, AKS `kubelogin`), run as
// client-go runs them: the client.authentication.k8s.io ExecCredential
// protocol, v1 and v1beta1.

#ifndef K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_
#define K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin/base/status.h"

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

/// The KUBERNETES_EXEC_INFO value: apiVersion, kind ExecCredential,
/// spec.interactive false (the agent never has a terminal), spec.cluster
/// only when provideClusterInfo.
std::string ExecInfoJson(const ExecConfig& exec, const ExecClusterInfo& info);

/// Parses a plugin's stdout. Its apiVersion must be the one requested and
/// its kind ExecCredential, as client-go requires; a token or a client
/// certificate with its key must be present. `plugin` names it in errors.
StatusOr<ExecCredential> ParseExecCredential(std::string_view text,
                                             const std::string& api_version,
                                             const std::string& plugin);

/// RFC 3339 ("2026-01-02T03:04:05Z", fractions and offsets allowed) to
/// Unix seconds.
StatusOr<int64_t> ParseRfc3339(std::string_view s);

/// The executable to run: `command` itself when it holds a slash, else the
/// first match in `path_env` ($PATH). kFailedPrecondition names the
/// command and shows the installHint when there is none.
StatusOr<std::string> ResolveExecCommand(const ExecConfig& exec,
                                         const std::string& path_env);

/// How long a plugin may run before it is killed.
constexpr int kExecTimeoutSeconds = 60;

/// Runs the plugin once, blocking (only before the event loop, or after a
/// 401): stdin /dev/null, the environment plus `env` plus
/// KUBERNETES_EXEC_INFO, killed after `timeout_seconds`. A non-zero exit is
/// kFailedPrecondition naming the plugin and its stderr's last line.
StatusOr<ExecCredential> RunExecPlugin(
    const ExecConfig& exec, const ExecClusterInfo& info,
    int timeout_seconds = kExecTimeoutSeconds);

/// The hex cache key: command, args, env, apiVersion and the server.
std::string ExecCacheKey(const ExecConfig& exec, const std::string& server);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_EXEC_CREDENTIAL_H_
