// SPDX-License-Identifier: Apache-2.0
// The CredentialSource implementations.

#include "plugin/kube/credential_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/bearer_token.h"
#include "plugin/kube/exec_credential_source.h"

namespace k8s_agent::kube {
namespace {

// A kubeconfig literal, or none at all.
class LiteralCredentialSource : public CredentialSource {
 public:
  explicit LiteralCredentialSource(std::string token)
      : token_(std::move(token)) {}
  StatusOr<MaybeCredential> Get(TimePoint) override {
    if (token_.empty()) return MaybeCredential(Credential{});
    K8S_ASSIGN_OR_RETURN(std::string token,
                         BearerTokenFrom(token_, "the kubeconfig's token"));
    return MaybeCredential(Credential{std::move(token), "", ""});
  }
  void Invalidate() override {}

 private:
  std::string token_;
};

// A token file, cached by the file's identity so a rotated (rewritten or
// re-linked) file is re-read.
class FileCredentialSource : public CredentialSource {
 public:
  explicit FileCredentialSource(std::string path) : path_(std::move(path)) {}
  StatusOr<MaybeCredential> Get(TimePoint) override;
  void Invalidate() override { valid_ = false; }

 private:
  std::string path_;
  std::string token_;
  bool valid_ = false;
  ino_t ino_ = 0;
  off_t size_ = -1;
  int64_t mtime_ns_ = -1;
};

StatusOr<MaybeCredential> FileCredentialSource::Get(TimePoint) {
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
  return MaybeCredential(Credential{token_, "", ""});
}

}  // namespace

std::unique_ptr<CredentialSource> NewCredentialSource(
    const ClusterConfig& config) {
  if (!config.token_file.empty()) {
    return std::make_unique<FileCredentialSource>(config.token_file);
  }
  if (!config.token.empty() || config.exec.command.empty()) {
    return std::make_unique<LiteralCredentialSource>(config.token);
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
  return ExecCredentialSource::ForConfig(config.exec, info);
}

}  // namespace k8s_agent::kube
