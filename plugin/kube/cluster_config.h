// SPDX-License-Identifier: Apache-2.0
// Where the API server is and how to authenticate: flags, kubeconfig,
// in-cluster.

#ifndef K8S_AGENT_PLUGIN_KUBE_CLUSTER_CONFIG_H_
#define K8S_AGENT_PLUGIN_KUBE_CLUSTER_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/kube/exec_credential.h"

namespace k8s_agent::kube {

/// What the user set explicitly (flags, K8S_AGENT_* env, config file; the
/// launcher has already merged those). Empty = not set.
struct ClusterOverrides {
  std::string server;                 ///< --server
  std::string token_file;             ///< --token-file
  std::string certificate_authority;  ///< --certificate-authority
  std::string ns;                     ///< --namespace
  std::string kubeconfig;             ///< --kubeconfig (else $KUBECONFIG)
};

/// Where to read the in-cluster service account and environment from.
/// Tests point these elsewhere; production uses the defaults.
struct InClusterSource {
  std::string sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  /// Environment lookup (KUBERNETES_SERVICE_HOST, _PORT, KUBECONFIG, HOME,
  /// XDG_CACHE_HOME, SSL_CERT_FILE, SSL_CERT_DIR).
  std::map<std::string, std::string> env;
};

/// Everything needed to talk to the API server.
struct ClusterConfig {
  std::string server;  ///< "https://10.96.0.1:443", no trailing slash.
  std::string ns;      ///< Default namespace.
  /// TLS trust: a CA file, or PEM bytes from kubeconfig *-data fields.
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;  ///< Only if a kubeconfig says so.
  /// With no CA configured (and TLS verified), the system's trust as Go
  /// finds it: $SSL_CERT_FILE / $SSL_CERT_DIR when set, else the
  /// distribution's bundle (the transport looks for it).
  std::string ssl_cert_file;
  std::string ssl_cert_dir;
  /// kubeconfig clusters[].cluster.tls-server-name: the name the server's
  /// certificate is checked against (and SNI), instead of the URL's host.
  std::string tls_server_name;
  /// kubeconfig clusters[].cluster.proxy-url (http, https, socks5): used
  /// instead of $HTTPS_PROXY/$NO_PROXY, as kubectl does.
  std::string proxy_url;
  /// Bearer token: a file re-read on change and after 401, or a literal
  /// from kubeconfig. Never logged.
  std::string token_file;
  std::string token;
  /// Client certificate auth (kubeconfig).
  std::string client_cert_file, client_cert_pem;
  std::string client_key_file, client_key_pem;
  /// An exec credential plugin (users[].user.exec); command "" = none.
  ExecConfig exec;
  /// The user's private directory for what the agents of a job share (an
  /// exec credential, a namespace's pod list): CredentialCacheDir's, or ""
  /// when there is no absolute $XDG_CACHE_HOME or $HOME.
  std::string cache_dir;
  /// Human-readable origin, for errors: "in-cluster service account",
  /// "kubeconfig /root/.kube/config context kind-kind", "flags".
  std::string source;
};

/// Resolves the configuration in the documented order: overrides, then
/// kubeconfig (--kubeconfig or $KUBECONFIG), then in-cluster. When nothing
/// is found the error lists every place tried.
StatusOr<ClusterConfig> LoadClusterConfig(const ClusterOverrides& overrides,
                                          const InClusterSource& in_cluster);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CLUSTER_CONFIG_H_
