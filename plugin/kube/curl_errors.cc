// SPDX-License-Identifier: Apache-2.0
// CURLcode to Status: transient, configuration, or a bad request.

#include "plugin/kube/curl_errors.h"

#include "plugin/base/strings.h"
#include "plugin/kube/curl_options.h"

namespace k8s_agent::kube {
namespace {

// Failures that are the proxy's, named by host:port (never its
// credentials): unreachable is transient, a refused CONNECT is not. OK
// when the failure is not the proxy's.
Status MapProxyError(const CurlFailure& failure, const ClusterConfig& config,
                     const std::string& what) {
  const std::string proxy = "proxy " + Printable(ProxyInUse(config));
  const std::string origin = config.proxy_url.empty()
                                 ? " (from $HTTPS_PROXY/$ALL_PROXY; exempt the "
                                   "server with $NO_PROXY)"
                                 : " (the kubeconfig's proxy-url)";
  long connect_code = failure.proxy_connect_code;
  if (connect_code >= 300) {
    std::string why =
        connect_code == 407 ? " (proxy authentication required)" : "";
    return FailedPreconditionError(
        proxy + " refused to tunnel to " + config.server + ": HTTP " +
        std::to_string(connect_code) + why + origin + ": " + what);
  }
  switch (failure.code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PROXY:
      // With a tunnel up (CONNECT answered 200) the failure is past the
      // proxy.
      if (connect_code == 200) return OkStatus();
      return UnavailableError(proxy + " could not be used" + origin + ": " +
                              what);
    default:
      return OkStatus();
  }
}

}  // namespace

Status MapCurlError(const CurlFailure& failure, const ClusterConfig& config) {
  std::string detail = curl_easy_strerror(failure.code);
  if (!failure.error_buffer.empty()) {
    detail += ": " + Printable(failure.error_buffer);
  }
  std::string what = failure.description + ": " + detail;
  if (failure.used_proxy) {
    Status proxy = MapProxyError(failure, config, what);
    if (!proxy.ok()) return proxy;
  }
  bool tls_trust = false;
  switch (failure.code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CIPHER:
      tls_trust = true;
      break;
    case CURLE_SSL_CONNECT_ERROR:
      // Also a reset during the handshake (transient); only certificate
      // complaints mean the configuration is wrong.
      tls_trust = detail.find("certificate") != std::string::npos ||
                  detail.find("verify") != std::string::npos;
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(what);
    default:
      break;
  }
  if (tls_trust) {
    return FailedPreconditionError(
        "TLS: x509: certificate verify failed: " + what +
        " (check --certificate-authority or the kubeconfig's "
        "certificate-authority for " +
        config.server +
        (config.tls_server_name.empty()
             ? ""
             : ", whose certificate must name the tls-server-name \"" +
                   Printable(config.tls_server_name) + "\"") +
        (config.ca_file.empty() && config.ca_pem.empty()
             ? "; none is set, so the system trust store or $SSL_CERT_FILE "
               "was used"
             : "") +
        ")");
  }
  // Refused, reset, timeouts, DNS: the server may come back.
  return UnavailableError(what);
}

}  // namespace k8s_agent::kube
