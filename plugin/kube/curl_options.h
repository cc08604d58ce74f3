// SPDX-License-Identifier: Apache-2.0
// The per-request libcurl options that come from the cluster configuration:
// TLS trust and client identity, the proxy, tls-server-name.

#ifndef K8S_AGENT_PLUGIN_KUBE_CURL_OPTIONS_H_
#define K8S_AGENT_PLUGIN_KUBE_CURL_OPTIONS_H_

#include <curl/curl.h>

#include <string>

#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"
#include "plugin/kube/credential_source.h"
#include "plugin/kube/curl_handles.h"

namespace k8s_agent::kube {

/// Trust: exactly the configured CA; with none, $SSL_CERT_FILE /
/// $SSL_CERT_DIR, else the distribution's bundle (this libcurl has no CA
/// path built in). Identity: the exec plugin's certificate, else the
/// config's.
Status ApplyTlsOptions(CURL* easy, const ClusterConfig& config,
                       const Credential& credential);

/// Where the request goes. Sets CURLOPT_URL to `url` (server + path), or,
/// with tls-server-name, to that name with CURLOPT_CONNECT_TO pointing it
/// at the server's host, so that curl checks the certificate against (and
/// sends SNI for) the name while connecting where kubectl would; the Host
/// header is added to `headers` as kubectl sends it. With proxy-url, that
/// proxy and no $NO_PROXY exceptions, as in kubectl.
Status ApplyRouteOptions(CURL* easy, const ClusterConfig& config,
                         const std::string& path, CurlSlist* connect_to,
                         std::vector<std::string>* headers);

/// "host:port" of the proxy a request used (proxy-url, else the
/// environment's), credentials left out; "" when none applies.
std::string ProxyInUse(const ClusterConfig& config);

/// Splits "https://host:port" into host (IPv6 keeps its brackets) and port
/// (443 when absent).
void SplitServer(const std::string& server, std::string* host,
                 std::string* port);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CURL_OPTIONS_H_
