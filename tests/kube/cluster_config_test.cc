// SPDX-License-Identifier: Apache-2.0
// LoadClusterConfig: precedence of flags, kubeconfig and in-cluster.

#include "plugin/kube/cluster_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "plugin/kube/curl_transport.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ClusterConfigTest : public ::testing::Test {
 protected:
  ClusterConfigTest() {
    char tmpl[] = "/tmp/k8s-kube-config-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    source_.sa_dir = dir_ + "/sa";
  }
  ~ClusterConfigTest() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::path p = dir_ + "/" + rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void ServiceAccount(const std::string& ns = "team-a") {
    Write("sa/token", "sa-token\n");
    Write("sa/ca.crt", "CA");
    Write("sa/namespace", ns);
  }
  void InClusterEnv(const std::string& host, const std::string& port) {
    source_.env["KUBERNETES_SERVICE_HOST"] = host;
    source_.env["KUBERNETES_SERVICE_PORT"] = port;
  }
  std::string Kubeconfig(const std::string& extra_user = "token: kc-token",
                         const std::string& extra_cluster = "") {
    Write("kube/config", R"(apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: other
  context: {cluster: c2, user: u2}
- name: dev
  context:
    cluster: c1
    user: u1
    namespace: kc-ns
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.crt
)" + extra_cluster + R"(
users:
- name: u1
  user:
    )" + extra_user + "\n");
    return dir_ + "/kube/config";
  }

  std::string dir_;
  InClusterSource source_;
  ClusterOverrides flags_;
};

TEST_F(ClusterConfigTest, NothingFoundListsEverythingTried) {
  auto c = LoadClusterConfig(flags_, source_);
  EXPECT_THAT(c, StatusIs(Code::kFailedPrecondition, "--server (not set)"));
  EXPECT_THAT(c.status().message(), HasSubstr("KUBECONFIG"));
  EXPECT_THAT(c.status().message(), HasSubstr("in-cluster"));
  EXPECT_THAT(c.status().message(), HasSubstr(source_.sa_dir + "/token"));
}

TEST_F(ClusterConfigTest, InClusterFromEnvAndServiceAccount) {
  ServiceAccount();
  InClusterEnv("10.96.0.1", "443");
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, source_.sa_dir + "/token");
  EXPECT_EQ(c->ca_file, source_.sa_dir + "/ca.crt");
  EXPECT_EQ(c->ns, "team-a");
  EXPECT_TRUE(c->token.empty());
  EXPECT_EQ(c->source, "in-cluster service account");
}

TEST_F(ClusterConfigTest, InClusterIpv6HostIsBracketed) {
  ServiceAccount();
  InClusterEnv("fd00:10:96::1", "6443");
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://[fd00:10:96::1]:6443");
}

TEST_F(ClusterConfigTest, ServiceAccountWithoutEnvUsesServiceDnsName) {
  ServiceAccount();
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://kubernetes.default.svc");
  EXPECT_EQ(c->token_file, source_.sa_dir + "/token");
}

TEST_F(ClusterConfigTest, FlagsOverrideSingleFieldsOfInCluster) {
  ServiceAccount();
  InClusterEnv("10.96.0.1", "443");
  flags_.server = "https://127.0.0.1:6443";
  flags_.ns = "flag-ns";
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->token_file, source_.sa_dir + "/token");
  EXPECT_EQ(c->ns, "flag-ns");
}

TEST_F(ClusterConfigTest, FlagsAlone) {
  flags_.server = "127.0.0.1:6443";
  flags_.token_file = "/tmp/token";
  flags_.certificate_authority = "/tmp/ca.crt";
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_file, "/tmp/ca.crt");
  EXPECT_EQ(c->token_file, "/tmp/token");
  EXPECT_EQ(c->ns, "default");
  EXPECT_EQ(c->source, "flags");
}

TEST_F(ClusterConfigTest, PlainHttpIsRejected) {
  flags_.server = "http://127.0.0.1:8080";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, "https"));
}

TEST_F(ClusterConfigTest, KubeconfigWinsOverInCluster) {
  ServiceAccount();
  InClusterEnv("10.96.0.1", "443");
  flags_.kubeconfig = Kubeconfig();
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_file, dir_ + "/kube/certs/ca.crt");
  EXPECT_EQ(c->token, "kc-token");
  EXPECT_TRUE(c->token_file.empty());
  EXPECT_EQ(c->ns, "kc-ns");
  EXPECT_EQ(c->source, "kubeconfig " + dir_ + "/kube/config context dev");
}

TEST_F(ClusterConfigTest, KubeconfigFromEnvSkipsMissingEntries) {
  std::string path = Kubeconfig();
  source_.env["KUBECONFIG"] = dir_ + "/missing:" + path;
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
}

TEST_F(ClusterConfigTest, KubeconfigListIsMergedFirstDefinitionWins) {
  // Given $KUBECONFIG=a:b as kubectl users keep it (credentials in one file,
  // clusters in another), expect one merged config: the first file's
  // current-context and definitions win, and each relative path resolves
  // against the file that holds it.
  Write("a/config", R"(current-context: dev
users:
- name: u1
  user: {tokenFile: tokens/u1}
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: ca-a.crt}
)");
  Write("b/config", R"(current-context: other
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: from-b}
- name: other
  context: {cluster: c2, user: u2}
clusters:
- name: c1
  cluster: {server: "https://10.9.9.9:6443"}
- name: c2
  cluster: {server: "https://10.0.0.2:6443", certificate-authority: ca-b.crt}
)");
  source_.env["KUBECONFIG"] = dir_ + "/a/config:" + dir_ + "/b/config";
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");  // a's c1, not b's.
  EXPECT_EQ(c->ca_file, dir_ + "/a/ca-a.crt");
  EXPECT_EQ(c->token_file, dir_ + "/a/tokens/u1");
  EXPECT_EQ(c->ns, "from-b");  // The context itself lives only in b.
  EXPECT_THAT(c->source, HasSubstr(dir_ + "/a/config:" + dir_ + "/b/config"));

  // A context whose cluster only b defines takes b's directory.
  Write("a/config", "current-context: other\n");
  c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.0.0.2:6443");
  EXPECT_EQ(c->ca_file, dir_ + "/b/ca-b.crt");

  // Names missing from every file are listed from all of them.
  Write("a/config", "current-context: gone\n");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition,
                       "\"gone\" does not exist (contexts in the files: "
                       "\"dev\", \"other\""));

  // A malformed file in the list names that file.
  Write("a/config", "current-context: [\n");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, dir_ + "/a/config"));
}

TEST_F(ClusterConfigTest, HomeKubeconfigIsTheDefaultWithoutKubeconfigEnv) {
  // As kubectl: without $KUBECONFIG, ~/.kube/config is read (before the
  // in-cluster service account).
  ServiceAccount();
  InClusterEnv("10.96.0.1", "443");
  std::filesystem::create_directories(dir_ + "/.kube");
  std::filesystem::copy_file(Kubeconfig(), dir_ + "/.kube/config");
  source_.env["HOME"] = dir_;
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->source, "kubeconfig " + dir_ + "/.kube/config context dev");

  std::filesystem::remove(dir_ + "/.kube/config");
  c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->source, "in-cluster service account");
}

TEST_F(ClusterConfigTest, ExplicitMissingKubeconfigIsError) {
  flags_.kubeconfig = dir_ + "/nope";
  EXPECT_THAT(LoadClusterConfig(flags_, source_), StatusIs(Code::kNotFound));
}

TEST_F(ClusterConfigTest, KubeconfigDataFieldsAndTokenFile) {
  // "CA-PEM" / "CERT" / "KEY" in base64.
  flags_.kubeconfig = Kubeconfig(
      "tokenFile: tok\n    client-certificate-data: Q0VSVA==\n"
      "    client-key-data: S0VZ",
      "    certificate-authority-data: Q0EtUEVN\n");
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_TRUE(c->ca_file.empty());
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_EQ(c->token_file, dir_ + "/kube/tok");
}

TEST_F(ClusterConfigTest, BadBase64NamesTheFileTheEntryAndTheFix) {
  // Cut off: one digit left over.
  flags_.kubeconfig = Kubeconfig("token: t\n    client-key-data: S0VZU",
                                 "    certificate-authority-data: Q0EtUEVN\n");
  auto c = LoadClusterConfig(flags_, source_);
  EXPECT_THAT(c, StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(c.status().message(),
              HasSubstr(flags_.kubeconfig + ": user \"u1\""));
  EXPECT_THAT(c.status().message(),
              HasSubstr("client-key-data is not valid base64"));
  EXPECT_THAT(c.status().message(), HasSubstr("base64 -w0"));
}

TEST_F(ClusterConfigTest, FlagsOverrideKubeconfig) {
  flags_.kubeconfig = Kubeconfig();
  flags_.certificate_authority = "/etc/ca.crt";
  flags_.token_file = "/etc/token";
  flags_.ns = "x";
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->ca_file, "/etc/ca.crt");
  EXPECT_EQ(c->token_file, "/etc/token");
  EXPECT_TRUE(c->token.empty());
  EXPECT_EQ(c->ns, "x");
}

TEST_F(ClusterConfigTest, InsecureOnlyFromKubeconfig) {
  Write("insecure", R"(apiVersion: v1
current-context: dev
contexts:
- name: dev
  context: {cluster: c1, user: u1}
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: u1
  user: {token: t}
)");
  flags_.kubeconfig = dir_ + "/insecure";
  std::optional<StatusOr<ClusterConfig>> c;
  std::string log = CaptureLog([&] { c = LoadClusterConfig(flags_, source_); });
  ASSERT_THAT(*c, IsOk());
  EXPECT_TRUE((*c)->insecure_skip_tls_verify);
  // Warned once, here, naming the server (the transport stays quiet).
  EXPECT_THAT(log, HasSubstr("insecure-skip-tls-verify"));
  EXPECT_THAT(log, HasSubstr((*c)->server + " is NOT verified"));
  std::string transport_log = CaptureLog([&] {
    EXPECT_THAT(CurlTransport::Create(**c, RealClock::Get()), IsOk());
  });
  EXPECT_EQ(transport_log, "");
}

// kubectl: "specifying a root certificates file with the insecure flag is
// not allowed". Both in one entry is refused before any request, naming
// the file, the entry and both ways out.
TEST_F(ClusterConfigTest, InsecureWithCaIsRefused) {
  flags_.kubeconfig =
      Kubeconfig("token: t", "    insecure-skip-tls-verify: true\n");
  auto c = LoadClusterConfig(flags_, source_);
  EXPECT_THAT(c, StatusIs(Code::kInvalidArgument,
                          flags_.kubeconfig + ": cluster \"c1\": sets both "
                                              "insecure-skip-tls-verify: true "
                                              "and certificate-authority"));
  EXPECT_THAT(c.status().message(),
              HasSubstr("remove insecure-skip-tls-verify"));

  flags_.kubeconfig = Kubeconfig("token: t",
                                 "    certificate-authority-data: Q0EtUEVN\n"
                                 "    insecure-skip-tls-verify: true\n");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument,
                       "and certificate-authority-data; specifying a root"));

  // --certificate-authority replaces both, as kubectl's flag does: the
  // server is then verified against the flag's CA.
  flags_.certificate_authority = "/etc/ca.crt";
  c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c, IsOk());
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->ca_file, "/etc/ca.crt");
}

TEST_F(ClusterConfigTest, MalformedKubeconfig) {
  Write("bad", "current-context: [unclosed\n");
  flags_.kubeconfig = dir_ + "/bad";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, "kubeconfig"));
  Write("noctx", "apiVersion: v1\nclusters: []\n");
  flags_.kubeconfig = dir_ + "/noctx";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition, "current-context"));
}

TEST_F(ClusterConfigTest, ExecPluginIsRead) {
  flags_.kubeconfig = Kubeconfig(R"(exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/plugin
      args: [get-token]
      env: [{name: A, value: b}]
      provideClusterInfo: true)");
  source_.env["XDG_CACHE_HOME"] = "/xdg";
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c.status(), IsOk());
  // Relative with a slash: the kubeconfig's directory, as kubectl.
  EXPECT_EQ(c->exec.command, dir_ + "/kube/bin/plugin");
  EXPECT_EQ(c->exec.args, std::vector<std::string>{"get-token"});
  EXPECT_EQ(c->exec.env.at(0).second, "b");
  EXPECT_EQ(c->exec.interactive_mode, "IfAvailable");
  EXPECT_TRUE(c->exec.provide_cluster_info);
  EXPECT_EQ(c->exec.cache_dir, "/xdg/k8s-agent");
  flags_.kubeconfig = Kubeconfig("exec: {command: gke-gcloud-auth-plugin}");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, "apiVersion"));
  flags_.kubeconfig = Kubeconfig(
      "exec: {apiVersion: client.authentication.k8s.io/v1, command: x}");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, "interactiveMode must be"));
}

TEST_F(ClusterConfigTest, AuthProviderAndBasicAuthAreRefusedClearly) {
  flags_.kubeconfig = Kubeconfig("auth-provider: {name: gcp}");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition, "auth-provider plugin"));
  flags_.kubeconfig = Kubeconfig("username: admin\n    password: pw");
  auto c = LoadClusterConfig(flags_, source_);
  EXPECT_THAT(c, StatusIs(Code::kFailedPrecondition,
                          "basic auth (username/password), which k8s-agent "
                          "does not support"));
  EXPECT_THAT(c.status().message(), Not(HasSubstr("pw")));
}

TEST_F(ClusterConfigTest, ProxyUrlAndTlsServerName) {
  flags_.kubeconfig = Kubeconfig("token: t",
                                 "    proxy-url: socks5://p:1080\n"
                                 "    tls-server-name: api.internal\n");
  auto c = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->proxy_url, "socks5h://p:1080");
  EXPECT_EQ(c->tls_server_name, "api.internal");
  flags_.kubeconfig = Kubeconfig("token: t", "    proxy-url: ftp://p:21\n");
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kInvalidArgument, "proxy-url scheme \"ftp\""));
}

TEST_F(ClusterConfigTest, SslCertFileOnlyWithoutConfiguredCa) {
  source_.env["SSL_CERT_FILE"] = "/roots.pem";
  source_.env["SSL_CERT_DIR"] = "/roots";
  flags_.kubeconfig = Kubeconfig();
  auto with_ca = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(with_ca.status(), IsOk());
  EXPECT_EQ(with_ca->ssl_cert_file, "");
  Write("plain", R"(apiVersion: v1
current-context: dev
contexts: [{name: dev, context: {cluster: c1, user: u1}}]
clusters: [{name: c1, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: u1, user: {token: t}}]
)");
  flags_.kubeconfig = dir_ + "/plain";
  auto no_ca = LoadClusterConfig(flags_, source_);
  ASSERT_THAT(no_ca.status(), IsOk());
  EXPECT_EQ(no_ca->ssl_cert_file, "/roots.pem");
  EXPECT_EQ(no_ca->ssl_cert_dir, "/roots");
}

TEST_F(ClusterConfigTest, MissingCurrentContextNamesFileAndContext) {
  // Given a kubeconfig whose current-context names no context, expect the
  // file and the context named, as kubectl does, not "no API server".
  Write("stale", R"(apiVersion: v1
current-context: gone
contexts:
- name: dev
  context: {cluster: c1, user: u1}
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443"}
)");
  flags_.kubeconfig = dir_ + "/stale";
  auto c = LoadClusterConfig(flags_, source_);
  EXPECT_THAT(c, StatusIs(Code::kFailedPrecondition,
                          "kubeconfig " + dir_ +
                              "/stale: current-context \"gone\" does not "
                              "exist (contexts in the file: \"dev\""));
  EXPECT_THAT(c.status().message(), Not(HasSubstr("no Kubernetes API")));

  // The same through $KUBECONFIG, with no contexts at all.
  Write("empty", "apiVersion: v1\ncurrent-context: gone\n");
  flags_.kubeconfig.clear();
  source_.env["KUBECONFIG"] = dir_ + "/empty";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition,
                       "\"gone\" does not exist (contexts in the file: none"));
}

TEST_F(ClusterConfigTest, MissingClusterOrServerIsNamed) {
  Write("nocluster",
        "current-context: dev\ncontexts:\n- name: dev\n  context: "
        "{cluster: c9, user: u1}\n");
  flags_.kubeconfig = dir_ + "/nocluster";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition,
                       "cluster \"c9\" of context \"dev\" does not exist"));
  Write("noserver",
        "current-context: dev\ncontexts:\n- name: dev\n  context: "
        "{cluster: c1}\nclusters:\n- name: c1\n  cluster: {}\n");
  flags_.kubeconfig = dir_ + "/noserver";
  EXPECT_THAT(LoadClusterConfig(flags_, source_),
              StatusIs(Code::kFailedPrecondition, "has no server"));
  // --server fills the gap, as flags override single fields.
  flags_.server = "https://10.9.9.9";
  EXPECT_THAT(LoadClusterConfig(flags_, source_), IsOk());
}

}  // namespace
}  // namespace k8s_agent::kube
