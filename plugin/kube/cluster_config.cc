// SPDX-License-Identifier: Apache-2.0
// LoadClusterConfig: flags over kubeconfig over in-cluster service account.

#include "plugin/kube/cluster_config.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string_view>

#include "plugin/base/base64.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/credential_cache.h"
#include "plugin/kube/kubeconfig_exec.h"

namespace k8s_agent::kube {
namespace {

// The in-cluster DNS name of the API server, for agents started where the
// service-account files exist but the service environment is gone (orted
// spawned under sshd on a worker has a clean environment).
constexpr char kInClusterServer[] = "https://kubernetes.default.svc";

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Env(const InClusterSource& source, const std::string& key) {
  auto it = source.env.find(key);
  return it == source.env.end() ? std::string() : it->second;
}

// `where`: the file and the entry ("FILE: user \"u\""), for the error.
StatusOr<std::string> DecodeField(std::string_view in, const char* field,
                                  const std::string& where) {
  std::optional<std::string> out = Base64Decode(in);
  if (!out) {
    return InvalidArgumentError(
        where + ": " + field +
        " is not valid base64 (standard alphabet, padding only at the end): "
        "re-encode the PEM file with `base64 -w0 FILE`");
  }
  return std::move(*out);
}

// kubeconfig paths are relative to the file that names them.
std::string Resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return dir + "/" + path;
}

std::string Scalar(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return "";
  YAML::Node v = node[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

// One file of the kubeconfig list ($KUBECONFIG may name several), kept with
// its directory because each relative path resolves against the file that
// holds it.
struct KubeconfigFile {
  std::string path;
  std::string dir;
  YAML::Node root;
};

// A named entry of the merged files and the file it came from.
struct Found {
  YAML::Node node;
  const KubeconfigFile* file = nullptr;
};

// Finds {name: NAME, <kind>: {...}} in the `list` of every file, first file
// first: kubectl merges $KUBECONFIG so that the first file to define a name
// wins. Callers test `file`: a default YAML::Node is a defined null, so
// `!node` is false for "not found" too.
Found Named(const std::vector<KubeconfigFile>& files, const char* list,
            const std::string& name, const char* kind) {
  for (const KubeconfigFile& f : files) {
    if (!f.root.IsMap()) continue;
    // A missing key of a const node is an invalid node, which throws on
    // IsSequence(); operator! is the safe test.
    const YAML::Node entries = f.root[list];
    if (!entries || !entries.IsSequence()) continue;
    for (const YAML::Node& entry : entries) {
      if (Scalar(entry, "name") != name) continue;
      // The first definition decides, even a broken one (not a map): a
      // later file's entry of the same name never stands in for it.
      if (!entry[kind] || !entry[kind].IsMap()) return Found{};
      return Found{entry[kind], &f};
    }
  }
  return Found{};
}

// "a, b" or "none": the names the files do hold, for "not found".
std::string NamesIn(const std::vector<KubeconfigFile>& files,
                    const char* list) {
  std::vector<std::string> names;
  for (const KubeconfigFile& f : files) {
    if (!f.root.IsMap()) continue;
    // A missing key of a const node is an invalid node, which throws on
    // IsSequence(); operator! is the safe test.
    const YAML::Node entries = f.root[list];
    if (!entries || !entries.IsSequence()) continue;
    for (const YAML::Node& entry : entries) {
      std::string name = Scalar(entry, "name");
      if (!name.empty()) names.push_back("\"" + Printable(name) + "\"");
    }
  }
  return names.empty() ? "none" : Join(names, ", ");
}

struct Kubeconfig {
  ClusterConfig config;
  std::string ns;
};

StatusOr<KubeconfigFile> LoadKubeconfigFile(const std::string& path) {
  KubeconfigFile f;
  f.path = path;
  f.dir = ".";
  if (auto slash = path.rfind('/'); slash != std::string::npos) {
    f.dir = slash == 0 ? "/" : path.substr(0, slash);
  }
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status().WithContext("kubeconfig");
  // yaml-cpp reports errors by throwing; nothing escapes this function.
  try {
    f.root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("kubeconfig " + path + ": " +
                                Printable(e.what()));
  }
  return f;
}

// proxy-url as kubectl takes it: http, https or socks5. socks5 becomes
// curl's socks5h because Go's SOCKS5 dialer sends the host name to the
// proxy, which resolves it (the API server's name may only resolve there).
StatusOr<std::string> CheckProxyUrl(const std::string& url,
                                    const std::string& where) {
  if (url.empty()) return url;
  if (StartsWith(url, "http://") || StartsWith(url, "https://")) return url;
  if (StartsWith(url, "socks5://")) return "socks5h://" + url.substr(9);
  std::string scheme = url.substr(0, url.find("://"));
  return InvalidArgumentError(
      where + ": proxy-url scheme \"" + Printable(scheme) +
      "\" is not supported (use http://, https:// or socks5://, as kubectl)");
}

// `ca_overridden`: --certificate-authority replaces the entry's CA and its
// insecure-skip-tls-verify, as kubectl's --certificate-authority does.
Status ParseCluster(const Found& cluster, const std::string& cluster_name,
                    bool ca_overridden, ClusterConfig* c) {
  const std::string& cluster_dir = cluster.file->dir;
  const std::string where =
      cluster.file->path + ": cluster \"" + Printable(cluster_name) + "\"";
  c->server = Scalar(cluster.node, "server");
  c->ca_file =
      Resolve(cluster_dir, Scalar(cluster.node, "certificate-authority"));
  std::string ca_data = Scalar(cluster.node, "certificate-authority-data");
  if (!ca_data.empty()) {
    K8S_ASSIGN_OR_RETURN(
        c->ca_pem, DecodeField(ca_data, "certificate-authority-data", where));
    c->ca_file.clear();
  }
  c->insecure_skip_tls_verify =
      Scalar(cluster.node, "insecure-skip-tls-verify") == "true";
  if (c->insecure_skip_tls_verify && !ca_overridden &&
      (!c->ca_file.empty() || !c->ca_pem.empty())) {
    // kubectl refuses it too: the entry asks for a CA check and for none,
    // and which one was meant cannot be told from here.
    const std::string ca_key = c->ca_pem.empty() ? "certificate-authority"
                                                 : "certificate-authority-data";
    return InvalidArgumentError(
        where + ": sets both insecure-skip-tls-verify: true and " + ca_key +
        "; specifying a root certificate with the insecure flag is not "
        "allowed, as in kubectl (remove insecure-skip-tls-verify to verify "
        "the server against that CA, or remove " +
        ca_key + " to skip verification)");
  }
  c->tls_server_name = Scalar(cluster.node, "tls-server-name");
  K8S_ASSIGN_OR_RETURN(c->proxy_url,
                       CheckProxyUrl(Scalar(cluster.node, "proxy-url"), where));
  return OkStatus();
}

Status ParseUser(const Found& found_user, const std::string& user_name,
                 ClusterConfig* c) {
  const YAML::Node& user = found_user.node;
  const std::string& user_dir = found_user.file->dir;
  const std::string user_where =
      found_user.file->path + ": user \"" + Printable(user_name) + "\"";
  c->token = Scalar(user, "token");
  c->token_file = Resolve(user_dir, Scalar(user, "tokenFile"));
  if (!c->token.empty()) c->token_file.clear();
  c->client_cert_file = Resolve(user_dir, Scalar(user, "client-certificate"));
  c->client_key_file = Resolve(user_dir, Scalar(user, "client-key"));
  std::string cert_data = Scalar(user, "client-certificate-data");
  std::string key_data = Scalar(user, "client-key-data");
  if (!cert_data.empty()) {
    K8S_ASSIGN_OR_RETURN(
        c->client_cert_pem,
        DecodeField(cert_data, "client-certificate-data", user_where));
    c->client_cert_file.clear();
  }
  if (!key_data.empty()) {
    K8S_ASSIGN_OR_RETURN(c->client_key_pem,
                         DecodeField(key_data, "client-key-data", user_where));
    c->client_key_file.clear();
  }
  bool has_token = !c->token.empty() || !c->token_file.empty();
  bool has_cert = !c->client_cert_file.empty() || !c->client_cert_pem.empty();
  if (user["auth-provider"] && !has_token && !has_cert) {
    return FailedPreconditionError(
        user_where +
        " uses an auth-provider plugin, which k8s-agent does not run (kubectl "
        "removed the gcp and azure ones in 1.26); use an exec plugin, a "
        "token, tokenFile or client certificate");
  }
  if (user["exec"] && !has_token) {
    K8S_ASSIGN_OR_RETURN(c->exec,
                         ParseExecStanza(user["exec"], user_dir, user_where));
    return OkStatus();
  }
  if (!has_token && !has_cert &&
      (!Scalar(user, "username").empty() ||
       !Scalar(user, "password").empty())) {
    // Sending nothing would be reported as "no credentials configured".
    return FailedPreconditionError(
        user_where +
        " uses basic auth (username/password), which k8s-agent does not "
        "support: the Kubernetes API server removed it in 1.19. Use a token, "
        "tokenFile, client certificate or exec plugin");
  }
  return OkStatus();
}

StatusOr<Kubeconfig> ParseKubeconfig(const std::vector<KubeconfigFile>& files,
                                     bool ca_overridden) {
  std::vector<std::string> paths;
  for (const KubeconfigFile& f : files) paths.push_back(f.path);
  // The files as one, for messages: "kubeconfig a" or "kubeconfig a:b".
  const std::string where = "kubeconfig " + Join(paths, ":");
  const std::string in_the = files.size() == 1 ? "in the file" : "in the files";
  Kubeconfig out;
  ClusterConfig& c = out.config;
  try {
    // The first file that sets current-context decides it, as in kubectl.
    std::string context_name;
    for (const KubeconfigFile& f : files) {
      context_name = Scalar(f.root, "current-context");
      if (!context_name.empty()) break;
    }
    if (context_name.empty()) {
      return FailedPreconditionError(where + ": no current-context");
    }
    Found context = Named(files, "contexts", context_name, "context");
    if (context.file == nullptr) {
      // kubectl: "context was not found for specified context: NAME".
      return FailedPreconditionError(
          where + ": current-context \"" + Printable(context_name) +
          "\" does not exist (contexts " + in_the + ": " +
          NamesIn(files, "contexts") +
          "; pick one with kubectl config use-context NAME, or point "
          "--kubeconfig/$KUBECONFIG at another file)");
    }
    out.ns = Scalar(context.node, "namespace");
    std::string cluster_name = Scalar(context.node, "cluster");
    Found cluster = Named(files, "clusters", cluster_name, "cluster");
    if (cluster.file == nullptr) {
      return FailedPreconditionError(
          where + ": cluster \"" + Printable(cluster_name) +
          "\" of context \"" + Printable(context_name) +
          "\" does not exist (clusters " + in_the + ": " +
          NamesIn(files, "clusters") + ")");
    }
    K8S_RETURN_IF_ERROR(ParseCluster(cluster, cluster_name, ca_overridden, &c));
    std::string user_name = Scalar(context.node, "user");
    Found found_user = Named(files, "users", user_name, "user");
    if (found_user.file != nullptr) {
      K8S_RETURN_IF_ERROR(ParseUser(found_user, user_name, &c));
    }
    c.source = where + " context " + context_name;
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(where + ": " + Printable(e.what()));
  }
  return out;
}

StatusOr<std::string> NormalizeServer(std::string server,
                                      const std::string& source) {
  server = std::string(Trim(server));
  while (!server.empty() && server.back() == '/') server.pop_back();
  if (server.find("://") == std::string::npos) server = "https://" + server;
  if (!StartsWith(server, "https://")) {
    // TLS is always verified; a plain-http server would bypass that.
    return InvalidArgumentError("API server \"" + Printable(server) +
                                "\" from " + source +
                                " must use https:// (TLS is required)");
  }
  return server;
}

// The kubeconfig files to read: an explicit path, else $KUBECONFIG's
// entries, else kubectl's default ~/.kube/config.
std::vector<std::string> KubeconfigCandidates(
    const ClusterOverrides& overrides, const InClusterSource& in_cluster) {
  std::vector<std::string> candidates;
  if (!overrides.kubeconfig.empty()) {
    candidates.push_back(overrides.kubeconfig);
    return candidates;
  }
  for (const std::string& p : Split(Env(in_cluster, "KUBECONFIG"), ':')) {
    if (!p.empty()) candidates.push_back(p);
  }
  std::string home = Env(in_cluster, "HOME");
  if (candidates.empty() && !home.empty()) {
    candidates.push_back(home + "/.kube/config");
  }
  return candidates;
}

// 2. kubeconfig: an explicit path must work; $KUBECONFIG entries that do
// not exist are skipped, as kubectl does, and the others are merged (first
// definition winning). nullopt when there is no file to read; what was
// tried is added to `tried`.
StatusOr<std::optional<Kubeconfig>> FromKubeconfig(
    const ClusterOverrides& overrides, const InClusterSource& in_cluster,
    std::vector<std::string>* tried) {
  std::vector<std::string> candidates =
      KubeconfigCandidates(overrides, in_cluster);
  bool explicit_kubeconfig = !overrides.kubeconfig.empty();
  if (candidates.empty()) {
    tried->push_back("--kubeconfig/$KUBECONFIG (not set)");
  }
  std::vector<KubeconfigFile> files;
  for (const std::string& path : candidates) {
    if (!explicit_kubeconfig && !FileExists(path)) {
      tried->push_back("kubeconfig " + path + " (no such file)");
      continue;
    }
    K8S_ASSIGN_OR_RETURN(KubeconfigFile file, LoadKubeconfigFile(path));
    files.push_back(std::move(file));
  }
  if (files.empty()) return std::optional<Kubeconfig>();
  K8S_ASSIGN_OR_RETURN(
      Kubeconfig kc,
      ParseKubeconfig(files, !overrides.certificate_authority.empty()));
  return std::optional<Kubeconfig>(std::move(kc));
}

// 3. In-cluster service account: the server from the service environment
// (else its DNS name, when the account's token is there). Sets nothing
// but `tried` when neither is; `sa_ns` is the account's namespace.
void FromServiceAccount(const InClusterSource& in_cluster,
                        ClusterConfig* config, std::string* sa_ns,
                        std::vector<std::string>* tried) {
  std::string token_path = in_cluster.sa_dir + "/token";
  std::string ca_path = in_cluster.sa_dir + "/ca.crt";
  std::string host = Env(in_cluster, "KUBERNETES_SERVICE_HOST");
  std::string port = Env(in_cluster, "KUBERNETES_SERVICE_PORT");
  bool have_sa = FileExists(token_path);
  if (!host.empty()) {
    if (host.find(':') != std::string::npos && host[0] != '[') {
      host = "[" + host + "]";  // IPv6 literal.
    }
    config->server = "https://" + host + ":" + (port.empty() ? "443" : port);
  } else if (have_sa) {
    config->server = kInClusterServer;
  }
  if (config->server.empty()) {
    tried->push_back("in-cluster (KUBERNETES_SERVICE_HOST not set, no " +
                     token_path + ")");
    return;
  }
  if (have_sa) config->token_file = token_path;
  if (FileExists(ca_path)) config->ca_file = ca_path;
  config->source = "in-cluster service account";
  auto ns = ReadFileToString(in_cluster.sa_dir + "/namespace", 4096);
  if (ns.ok()) *sa_ns = std::string(Trim(*ns));
}

// 1. Flags override single fields of whatever was found.
void ApplyFlags(const ClusterOverrides& overrides, ClusterConfig* config) {
  if (!overrides.server.empty()) {
    config->source =
        config->server.empty() ? "flags" : config->source + " + flags";
    config->server = overrides.server;
  }
  if (!overrides.token_file.empty()) {
    config->token_file = overrides.token_file;
    config->token.clear();
  }
  if (!overrides.certificate_authority.empty()) {
    config->ca_file = overrides.certificate_authority;
    config->ca_pem.clear();
    config->insecure_skip_tls_verify = false;  // An explicit CA wins.
  }
}

// No server from any source: what each source lacked, and how to set one.
Status NoServer(const ClusterConfig& config, bool from_kubeconfig,
                std::vector<std::string> tried) {
  if (from_kubeconfig) {
    return FailedPreconditionError(
        config.source +
        ": the context's cluster has no server (set clusters[].cluster.server "
        "there, or pass --server)");
  }
  tried.insert(tried.begin(), "--server (not set)");
  return FailedPreconditionError(
      "no Kubernetes API server configured; tried: " + Join(tried, "; ") +
      " (run in a pod with a service account, or set K8S_AGENT_SERVER, "
      "K8S_AGENT_TOKEN_FILE and K8S_AGENT_CERTIFICATE_AUTHORITY, or "
      "server=/token-file=/certificate-authority= in /etc/k8s-agent.conf)");
}

}  // namespace

StatusOr<ClusterConfig> LoadClusterConfig(const ClusterOverrides& overrides,
                                          const InClusterSource& in_cluster) {
  std::vector<std::string> tried;
  ClusterConfig config;
  std::string kubeconfig_ns;
  K8S_ASSIGN_OR_RETURN(std::optional<Kubeconfig> kc,
                       FromKubeconfig(overrides, in_cluster, &tried));
  const bool from_kubeconfig = kc.has_value();
  if (kc) {
    config = std::move(kc->config);
    kubeconfig_ns = kc->ns;
  }
  std::string sa_ns;
  if (!from_kubeconfig) FromServiceAccount(in_cluster, &config, &sa_ns, &tried);
  ApplyFlags(overrides, &config);
  if (config.server.empty()) return NoServer(config, from_kubeconfig, tried);
  K8S_ASSIGN_OR_RETURN(config.server,
                       NormalizeServer(config.server, config.source));

  config.cache_dir = CredentialCacheDir(Env(in_cluster, "XDG_CACHE_HOME"),
                                        Env(in_cluster, "HOME"));
  if (!config.exec.command.empty()) config.exec.cache_dir = config.cache_dir;
  if (config.ca_file.empty() && config.ca_pem.empty() &&
      !config.insecure_skip_tls_verify) {
    // No CA configured: Go (kubectl) then trusts the system roots, which
    // these variables replace.
    config.ssl_cert_file = Env(in_cluster, "SSL_CERT_FILE");
    config.ssl_cert_dir = Env(in_cluster, "SSL_CERT_DIR");
  }
  config.ns = !overrides.ns.empty()    ? overrides.ns
              : !kubeconfig_ns.empty() ? kubeconfig_ns
              : !sa_ns.empty()         ? sa_ns
                                       : "default";
  if (config.insecure_skip_tls_verify) {
    // The one warning: the transport only applies the setting.
    LogWarning(config.source +
               " sets insecure-skip-tls-verify: the certificate of " +
               config.server + " is NOT verified");
  }
  return config;
}

}  // namespace k8s_agent::kube
