// SPDX-License-Identifier: Apache-2.0
// ApplyTlsOptions, ApplyRouteOptions: ClusterConfig to curl_easy_setopt.

#include "plugin/kube/curl_options.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

// The distribution's trust store, found at run time, as Go looks:
// Debian/Ubuntu, RHEL/Fedora, SUSE, Alpine.
const char* SystemCaBundle() {
  static const char* const kBundles[] = {
      "/etc/ssl/certs/ca-certificates.crt",
      "/etc/pki/tls/certs/ca-bundle.crt",
      "/etc/ssl/ca-bundle.pem",
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
      "/etc/ssl/cert.pem",
  };
  static const char* const found = [] {
    for (const char* path : kBundles) {
      if (::access(path, R_OK) == 0) return path;
    }
    return static_cast<const char*>(nullptr);
  }();
  return found;
}

void SetBlob(CURL* e, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(e, option, &blob);
}

// "scheme://user:pw@host:port/..." -> "host:port".
std::string HostPort(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find('/', start);
  std::string authority = url.substr(start, end - start);
  size_t at = authority.rfind('@');
  return at == std::string::npos ? authority : authority.substr(at + 1);
}

}  // namespace

void SplitServer(const std::string& server, std::string* host,
                 std::string* port) {
  std::string authority = HostPort(server);
  size_t colon = authority.rfind(':');
  size_t bracket = authority.rfind(']');
  if (colon == std::string::npos ||
      (bracket != std::string::npos && colon < bracket)) {
    *host = authority;
    *port = "443";
  } else {
    *host = authority.substr(0, colon);
    *port = authority.substr(colon + 1);
  }
}

Status ApplyTlsOptions(CURL* e, const ClusterConfig& config,
                       const Credential& credential) {
  bool no_ca = config.ca_file.empty() && config.ca_pem.empty();
  // The trust for an https:// proxy is the system's, as in Go.
  const char* system = !config.ssl_cert_file.empty()
                           ? config.ssl_cert_file.c_str()
                           : SystemCaBundle();
  if (system != nullptr) curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, system);
  if (!config.ssl_cert_dir.empty()) {
    curl_easy_setopt(e, CURLOPT_PROXY_CAPATH, config.ssl_cert_dir.c_str());
  }
  if (no_ca) {
    if (system != nullptr) curl_easy_setopt(e, CURLOPT_CAINFO, system);
    if (!config.ssl_cert_dir.empty()) {
      curl_easy_setopt(e, CURLOPT_CAPATH, config.ssl_cert_dir.c_str());
    }
  } else if (!config.ca_file.empty()) {
    // Exactly the configured CA, not the system store too.
    curl_easy_setopt(e, CURLOPT_CAINFO, config.ca_file.c_str());
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  } else {
    SetBlob(e, CURLOPT_CAINFO_BLOB, config.ca_pem);
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
  const std::string& cert_pem = credential.client_cert_pem.empty()
                                    ? config.client_cert_pem
                                    : credential.client_cert_pem;
  const std::string& key_pem = credential.client_key_pem.empty()
                                   ? config.client_key_pem
                                   : credential.client_key_pem;
  if (!cert_pem.empty()) {
    SetBlob(e, CURLOPT_SSLCERT_BLOB, cert_pem);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config.client_cert_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLCERT, config.client_cert_file.c_str());
  }
  if (!key_pem.empty()) {
    SetBlob(e, CURLOPT_SSLKEY_BLOB, key_pem);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config.client_key_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLKEY, config.client_key_file.c_str());
  }
  if (config.insecure_skip_tls_verify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  return OkStatus();
}

Status ApplyRouteOptions(CURL* e, const ClusterConfig& config,
                         const std::string& path, CurlSlist* connect_to,
                         std::vector<std::string>* headers) {
  if (!config.proxy_url.empty()) {
    curl_easy_setopt(e, CURLOPT_PROXY, config.proxy_url.c_str());
    // "" = no host is exempt: kubectl ignores $NO_PROXY with proxy-url.
    curl_easy_setopt(e, CURLOPT_NOPROXY, "");
  }
  if (config.tls_server_name.empty()) {
    std::string url = config.server + path;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    return OkStatus();
  }
  std::string host, port;
  SplitServer(config.server, &host, &port);
  const std::string& name = config.tls_server_name;
  std::string url = "https://" + name + ":" + port + path;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  std::string route = name + ":" + port + ":" + host + ":" + port;
  curl_slist* list = curl_slist_append(nullptr, route.c_str());
  if (list == nullptr) return InternalError("out of memory (connect-to)");
  connect_to->reset(list);
  curl_easy_setopt(e, CURLOPT_CONNECT_TO, list);
  // Go's Host header is the URL's; the TLS name changes only the check.
  headers->push_back("Host: " + HostPort(config.server));
  return OkStatus();
}

std::string ProxyInUse(const ClusterConfig& config) {
  if (!config.proxy_url.empty()) return HostPort(config.proxy_url);
  for (const char* name :
       {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return HostPort(v);
  }
  return "";
}

}  // namespace k8s_agent::kube
