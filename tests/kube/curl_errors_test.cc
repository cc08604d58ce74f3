// SPDX-License-Identifier: Apache-2.0
// MapCurlError: which failures are worth a retry, and what the message
// tells a person to fix.

#include "plugin/kube/curl_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRequest[] = "GET https://api.example:6443/api/v1/pods";

ClusterConfig Config() {
  ClusterConfig config;
  config.server = "https://api.example:6443";
  config.ca_file = "/etc/k8s/ca.crt";
  return config;
}

CurlFailure Failure(CURLcode code, std::string error_buffer = "") {
  CurlFailure failure;
  failure.code = code;
  failure.description = kRequest;
  failure.error_buffer = std::move(error_buffer);
  return failure;
}

// "GET https://...: <curl's text>[: <error buffer>]".
std::string What(CURLcode code, const std::string& error_buffer = "") {
  return std::string(kRequest) + ": " + curl_easy_strerror(code) +
         (error_buffer.empty() ? "" : ": " + error_buffer);
}

// Sets or clears the proxy variables for one test, restoring them after.
class ProxyEnvironment {
 public:
  explicit ProxyEnvironment(const char* https_proxy) {
    for (const char* name :
         {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
      const char* v = std::getenv(name);
      saved_.emplace_back(
          name, v == nullptr ? std::nullopt : std::optional<std::string>(v));
      unsetenv(name);
    }
    if (https_proxy != nullptr) setenv("HTTPS_PROXY", https_proxy, 1);
  }
  ~ProxyEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ProxyEnvironment(const ProxyEnvironment&) = delete;
  ProxyEnvironment& operator=(const ProxyEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(CurlErrorsTest, NetworkFailuresAreUnavailableAndNameTheRequest) {
  for (CURLcode code :
       {CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST,
        CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR, CURLE_SEND_ERROR,
        CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2_STREAM}) {
    Status status = MapCurlError(Failure(code), Config());
    EXPECT_EQ(status.code(), Code::kUnavailable) << curl_easy_strerror(code);
    EXPECT_EQ(status.message(), What(code));
  }
}

TEST(CurlErrorsTest, TheErrorBufferFollowsCurlsText) {
  Status status = MapCurlError(
      Failure(CURLE_COULDNT_CONNECT,
              "Failed to connect to api.example port 6443: Connection refused"),
      Config());
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_EQ(status.message(),
            What(CURLE_COULDNT_CONNECT,
                 "Failed to connect to api.example port 6443: Connection "
                 "refused"));
}

TEST(CurlErrorsTest, TheErrorBufferIsMadePrintable) {
  Status status =
      MapCurlError(Failure(CURLE_RECV_ERROR, "bad\x1b[2Jtext"), Config());
  EXPECT_THAT(status.message(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(status.message(), HasSubstr(": bad\\x1b[2Jtext"));
}

TEST(CurlErrorsTest, CertificateFailuresAreForTheConfigurationToFix) {
  for (CURLcode code :
       {CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
        CURLE_SSL_CERTPROBLEM, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
        CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
        CURLE_SSL_CIPHER}) {
    Status status = MapCurlError(Failure(code), Config());
    EXPECT_EQ(status.code(), Code::kFailedPrecondition)
        << curl_easy_strerror(code);
    EXPECT_EQ(status.message(),
              "TLS: x509: certificate verify failed: " + What(code) +
                  " (check --certificate-authority or the kubeconfig's "
                  "certificate-authority for https://api.example:6443)");
  }
}

TEST(CurlErrorsTest, WithoutACaTheMessageSaysTheSystemStoreWasUsed) {
  ClusterConfig config = Config();
  config.ca_file.clear();
  Status status = MapCurlError(Failure(CURLE_PEER_FAILED_VERIFICATION), config);
  EXPECT_EQ(status.message(),
            "TLS: x509: certificate verify failed: " +
                What(CURLE_PEER_FAILED_VERIFICATION) +
                " (check --certificate-authority or the kubeconfig's "
                "certificate-authority for https://api.example:6443; none "
                "is set, so the system trust store or $SSL_CERT_FILE was "
                "used)");
  config.ca_pem = "-----BEGIN CERTIFICATE-----";
  EXPECT_THAT(
      MapCurlError(Failure(CURLE_PEER_FAILED_VERIFICATION), config).message(),
      Not(HasSubstr("none is set")));
}

TEST(CurlErrorsTest, TheTlsServerNameIsNamedWhenSet) {
  ClusterConfig config = Config();
  config.tls_server_name = "kubernetes.default";
  Status status = MapCurlError(Failure(CURLE_PEER_FAILED_VERIFICATION), config);
  EXPECT_EQ(status.message(),
            "TLS: x509: certificate verify failed: " +
                What(CURLE_PEER_FAILED_VERIFICATION) +
                " (check --certificate-authority or the kubeconfig's "
                "certificate-authority for https://api.example:6443, whose "
                "certificate must name the tls-server-name "
                "\"kubernetes.default\")");
}

TEST(CurlErrorsTest, AHandshakeErrorIsTrustOnlyWhenItNamesACertificate) {
  EXPECT_THAT(MapCurlError(Failure(CURLE_SSL_CONNECT_ERROR,
                                   "OpenSSL SSL_connect: Connection reset by "
                                   "peer in connection to api.example:6443"),
                           Config()),
              StatusIs(Code::kUnavailable));
  EXPECT_THAT(
      MapCurlError(Failure(CURLE_SSL_CONNECT_ERROR,
                           "SSL certificate problem: self-signed certificate"),
                   Config()),
      StatusIs(Code::kFailedPrecondition, "certificate verify failed"));
  EXPECT_THAT(MapCurlError(Failure(CURLE_SSL_CONNECT_ERROR,
                                   "error:0A000086:SSL routines::verify"),
                           Config()),
              StatusIs(Code::kFailedPrecondition));
}

TEST(CurlErrorsTest, ABadUrlIsAnInvalidArgument) {
  for (CURLcode code : {CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL}) {
    Status status = MapCurlError(Failure(code), Config());
    EXPECT_EQ(status.code(), Code::kInvalidArgument);
    EXPECT_EQ(status.message(), What(code));
  }
}

TEST(CurlErrorsTest, AProxyRefusingTheTunnelNamesItWithoutCredentials) {
  ClusterConfig config = Config();
  config.proxy_url = "http://user:secret@proxy.example:3128";
  CurlFailure failure = Failure(CURLE_COULDNT_CONNECT);
  failure.used_proxy = true;
  failure.proxy_connect_code = 407;
  Status status = MapCurlError(failure, config);
  EXPECT_EQ(status.code(), Code::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "proxy proxy.example:3128 refused to tunnel to "
            "https://api.example:6443: HTTP 407 (proxy authentication "
            "required) (the kubeconfig's proxy-url): " +
                What(CURLE_COULDNT_CONNECT));
  failure.proxy_connect_code = 403;
  EXPECT_EQ(MapCurlError(failure, config).message(),
            "proxy proxy.example:3128 refused to tunnel to "
            "https://api.example:6443: HTTP 403 (the kubeconfig's "
            "proxy-url): " +
                What(CURLE_COULDNT_CONNECT));
}

TEST(CurlErrorsTest, AnUnreachableProxyIsUnavailable) {
  ClusterConfig config = Config();
  config.proxy_url = "http://proxy.example:3128";
  for (CURLcode code :
       {CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PROXY}) {
    CurlFailure failure = Failure(code);
    failure.used_proxy = true;
    Status status = MapCurlError(failure, config);
    EXPECT_EQ(status.code(), Code::kUnavailable);
    EXPECT_EQ(status.message(),
              "proxy proxy.example:3128 could not be used (the kubeconfig's "
              "proxy-url): " +
                  What(code));
  }
}

TEST(CurlErrorsTest, TheEnvironmentsProxyIsNamedWithTheWayToExemptTheServer) {
  ProxyEnvironment env("http://proxy.example:8080");
  CurlFailure failure = Failure(CURLE_COULDNT_CONNECT);
  failure.used_proxy = true;
  EXPECT_EQ(MapCurlError(failure, Config()).message(),
            "proxy proxy.example:8080 could not be used (from "
            "$HTTPS_PROXY/$ALL_PROXY; exempt the server with $NO_PROXY): " +
                What(CURLE_COULDNT_CONNECT));
}

TEST(CurlErrorsTest, PastAnOpenTunnelTheFailureIsTheServers) {
  ClusterConfig config = Config();
  config.proxy_url = "http://proxy.example:3128";
  CurlFailure failure = Failure(CURLE_COULDNT_CONNECT);
  failure.used_proxy = true;
  failure.proxy_connect_code = 200;
  Status status = MapCurlError(failure, config);
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_EQ(status.message(), What(CURLE_COULDNT_CONNECT));
  failure = Failure(CURLE_PEER_FAILED_VERIFICATION);
  failure.used_proxy = true;
  failure.proxy_connect_code = 200;
  EXPECT_THAT(MapCurlError(failure, config),
              StatusIs(Code::kFailedPrecondition, "certificate verify failed"));
}

TEST(CurlErrorsTest, AConnectCodeCountsOnlyWhenTheProxyWasUsed) {
  ClusterConfig config = Config();
  config.proxy_url = "http://proxy.example:3128";
  CurlFailure failure = Failure(CURLE_COULDNT_CONNECT);
  failure.proxy_connect_code = 407;
  EXPECT_EQ(MapCurlError(failure, config).message(),
            What(CURLE_COULDNT_CONNECT));
}

}  // namespace
}  // namespace k8s_agent::kube
