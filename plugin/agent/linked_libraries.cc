// SPDX-License-Identifier: Apache-2.0
// LinkedLibraries; see linked_libraries.h.

#include "plugin/agent/linked_libraries.h"

#include <curl/curl.h>
#include <libssh2.h>
#include <openssl/crypto.h>

namespace k8s_agent {
namespace {

std::string OrUnknown(const char* s) { return s ? s : "unknown"; }

}  // namespace

std::string LinkedLibraries() {
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  // "OpenSSL 3.0.17 1 Jul 2025": the name and number only.
  std::string openssl = OrUnknown(OpenSSL_version(OPENSSL_VERSION));
  size_t end = openssl.find(' ', openssl.find(' ') + 1);
  if (end != std::string::npos) openssl.resize(end);
  return openssl + ", libssh2 " + OrUnknown(libssh2_version(0)) + ", libcurl " +
         OrUnknown(curl->version) + ", nghttp2 " +
         OrUnknown(curl->nghttp2_version) + ", yaml-cpp " +
         K8S_YAML_CPP_DEB_VERSION;
}

}  // namespace k8s_agent
