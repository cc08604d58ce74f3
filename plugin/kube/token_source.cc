// SPDX-License-Identifier: Apache-2.0
// The TokenSource implementations.

#include "plugin/kube/token_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/bearer_token.h"
#include "plugin/kube/credential_cache.h"
#include "plugin/kube/exec_credential.h"

namespace k8s_agent::kube {
namespace {

// A kubeconfig literal, or none at all.
class LiteralTokenSource : public TokenSource {
 public:
  explicit LiteralTokenSource(std::string token) : token_(std::move(token)) {}
  StatusOr<Credential> Get() override {
    if (token_.empty()) return Credential{};
    K8S_ASSIGN_OR_RETURN(std::string token,
                         BearerTokenFrom(token_, "the kubeconfig's token"));
    return Credential{std::move(token), "", ""};
  }
  void Invalidate() override {}

 private:
  std::string token_;
};

// A token file, cached by the file's identity so a rotated (rewritten or
// re-linked) file is re-read.
class FileTokenSource : public TokenSource {
 public:
  explicit FileTokenSource(std::string path) : path_(std::move(path)) {}
  StatusOr<Credential> Get() override;
  void Invalidate() override { valid_ = false; }

 private:
  std::string path_;
  std::string token_;
  bool valid_ = false;
  ino_t ino_ = 0;
  off_t size_ = -1;
  int64_t mtime_ns_ = -1;
};

StatusOr<Credential> FileTokenSource::Get() {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    return UnauthenticatedError("token file " + path_ + ": " +
                                std::strerror(errno));
  }
  int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (!valid_ || st.st_ino != ino_ || st.st_size != size_ ||
      mtime_ns != mtime_ns_) {
    auto text = ReadFileToString(path_, 1 << 20);
    if (!text.ok()) return UnauthenticatedError(text.status().message());
    K8S_ASSIGN_OR_RETURN(token_, BearerTokenFrom(*text, "token file " + path_));
    valid_ = true;
    ino_ = st.st_ino;
    size_ = st.st_size;
    mtime_ns_ = mtime_ns;
  }
  return Credential{token_, "", ""};
}

// An exec plugin behind the cross-process cache. The credential is kept in
// memory too: one without an expiration lives only here, as in kubectl.
class ExecTokenSource : public TokenSource {
 public:
  ExecTokenSource(const ExecConfig& exec, ExecClusterInfo info)
      : exec_(exec),
        info_(std::move(info)),
        cache_(exec.cache_dir, ExecCacheKey(exec, info_.server),
               [] { return static_cast<int64_t>(std::time(nullptr)); }) {}
  StatusOr<Credential> Get() override;
  void Invalidate() override { stale_ = true; }

 private:
  ExecConfig exec_;
  ExecClusterInfo info_;
  CredentialCache cache_;
  ExecCredential cred_;
  bool have_ = false;
  bool stale_ = false;
};

StatusOr<Credential> ExecTokenSource::Get() {
  int64_t now = std::time(nullptr);
  bool expiring = cred_.expires_at != 0 &&
                  cred_.expires_at <= now + kCredentialMarginSeconds;
  if (!have_ || stale_ || expiring) {
    // After a 401 the token just refused must not come back from the file
    // another agent wrote before; a newer one there is fine.
    std::string refused = stale_ ? cred_.token : "";
    StatusOr<ExecCredential> fresh =
        cache_.Get([this] { return RunExecPlugin(exec_, info_); }, refused);
    if (!fresh.ok()) return fresh.status();
    cred_ = std::move(fresh).value();
    have_ = true;
    stale_ = false;
  }
  return Credential{cred_.token, cred_.client_cert_pem, cred_.client_key_pem};
}

}  // namespace

std::unique_ptr<TokenSource> NewTokenSource(const ClusterConfig& config) {
  if (!config.token_file.empty()) {
    return std::make_unique<FileTokenSource>(config.token_file);
  }
  if (!config.token.empty() || config.exec.command.empty()) {
    return std::make_unique<LiteralTokenSource>(config.token);
  }
  ExecClusterInfo info;
  info.server = config.server;
  info.tls_server_name = config.tls_server_name;
  info.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
  info.ca_pem = config.ca_pem;
  if (info.ca_pem.empty() && !config.ca_file.empty()) {
    auto pem = ReadFileToString(config.ca_file, 1 << 20);
    if (pem.ok()) info.ca_pem = *pem;
  }
  info.proxy_url = config.proxy_url;
  return std::make_unique<ExecTokenSource>(config.exec, std::move(info));
}

}  // namespace k8s_agent::kube
